package dev.leasehold.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One event of an {@link Observation} (PROTOCOL.md 16.2): the key's state when a change was
 * decided, what decided it, and whether changes in between were not reported. <b>Not a grant</b>
 * (9.15.6): it says who held the key when the change was decided, not for how long; only a
 * {@link Ticket} entitles its holder, and its token fences. An observed token and value (a
 * leader's term and identity) are for routing and display.
 *
 * @param key the observed key
 * @param state the key's state
 * @param cause what decided this state
 * @param coalesced at least one change since the previous event was not reported (the server's
 *        output or this client's listener was behind, 16.4 and 9.15.2)
 * @param token {@link State#HELD}: the holder's token; {@link State#LOCK_DELAY}: the expired
 *        grant's; otherwise the highest token granted on the key known (0: none yet). Never below
 *        an earlier event's of the same observation (9.15.4)
 * @param count {@link State#HELD}: 1; {@link State#SHARED}: the shared slots in use; else 0
 * @param limit {@link State#SHARED}: the key's limit (0 = read lock); else 0
 * @param value {@link State#HELD}: the grant's value (empty for none, section 17); else empty
 */
public record KeyEvent(String key, State state, Cause cause, boolean coalesced, long token, int count, int limit,
        byte[] value) {

    /** A key's state (16.2). */
    public enum State {
        /** Nobody holds it. */
        FREE,
        /** Held exclusively: {@link #token()} is the holder's, {@link #value()} its value. */
        HELD,
        /** An expired exclusive grant's lock-delay (PROTOCOL.md section 12): granted to nobody yet. */
        LOCK_DELAY,
        /** Held shared: {@link #count()} slots of {@link #limit()} in use. */
        SHARED,
        /** A single server's recovery grace after a restart: a previous run's holder may still act. */
        RECOVERY_GRACE
    }

    /** What decided a state (16.2). */
    public enum Cause {
        /** The first event of a subscription: the key's state now. */
        CURRENT,
        /** A grant (also a hand-off after a release, an expiry or the end of a lock-delay). */
        GRANT,
        /** A release, with nothing granted. */
        RELEASE,
        /** A lease expiry, with nothing granted. */
        EXPIRY,
        /** The end of a lock-delay, with nothing granted. */
        LOCK_DELAY_END,
        /** The holder set its value ({@link Ticket#proclaim}). */
        VALUE_SET,
        /** The end of the recovery grace. */
        RECOVERY_GRACE_END
    }

    /** The value as text (UTF-8, malformed bytes replaced), for display. */
    public String valueText() {
        return new String(value, StandardCharsets.UTF_8);
    }

    @Override
    public byte[] value() {
        return value.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyEvent e && e.key.equals(key) && e.state == state && e.cause == cause
                && e.coalesced == coalesced && e.token == token && e.count == count && e.limit == limit
                && Arrays.equals(e.value, value);
    }

    @Override
    public int hashCode() {
        return key.hashCode() * 31 + Long.hashCode(token);
    }

    @Override
    public String toString() {
        return "KeyEvent[key=" + key + ", " + state + ", cause=" + cause + (coalesced ? ", coalesced" : "")
                + ", token=" + token + (state == State.SHARED ? ", count=" + count + ", limit=" + limit : "")
                + (value.length > 0 ? ", value=" + valueText() : "") + "]";
    }
}
