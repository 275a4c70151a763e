package dev.leasehold.registry;

import java.util.Arrays;

import dev.leasehold.protocol.Answer;

/**
 * What one watch event shows of a key (PROTOCOL.md 16.2), as the registry decided it under the
 * key's lane lock: the state ({@code Answer.Event.STATE_*}), what decided it
 * ({@code Answer.Event.CAUSE_*}), the token the key shows, the shared slots in use ({@code count},
 * 1 when held exclusive), the shared limit, and the holder's value (null: none). Immutable and
 * shared by every watch of the key; each watch applies its own token floor and coalesced flag
 * when it writes the frame.
 */
public record KeyEvent(int state, int cause, long token, int count, int limit, byte[] value) {

    /** True if {@code other} shows the same five things (state, token, count, limit, value), whatever the cause. */
    boolean showsSameAs(KeyEvent other) {
        return other != null && other.state == state && other.token == token && other.count == count
                && other.limit == limit && Arrays.equals(other.value, value);
    }

    /** This state with another cause (a first event: {@link Answer.Event#CAUSE_CURRENT}). */
    public KeyEvent withCause(int newCause) {
        return newCause == cause ? this : new KeyEvent(state, newCause, token, count, limit, value);
    }

    /**
     * True for the states whose token is "the highest known" ({@code F}, {@code S}, {@code G}):
     * a watch never shows one below its previous event's (16.2). {@code H} and {@code D} carry
     * their grant's own token.
     */
    public boolean tokenIsHighestKnown() {
        return state == Answer.Event.STATE_FREE || state == Answer.Event.STATE_SHARED
                || state == Answer.Event.STATE_GRACE;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyEvent e && e.cause == cause && showsSameAs(e);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(token) * 31 + state * 7 + cause;
    }

    @Override
    public String toString() {
        return "KeyEvent[" + (char) state + ", cause " + cause + ", token " + token + ", count " + count + ", limit "
                + limit + ", vlen " + (value == null ? 0 : value.length) + "]";
    }
}
