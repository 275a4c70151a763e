package dev.leasehold.registry;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.protocol.HoldMode;

/**
 * One key as an operator sees it at one instant (the {@code locks} endpoint and
 * {@code leasehold inspect}): read under its lane lock by {@link LockRegistry#inspect}, so the
 * fields agree with each other. Durations are nanoseconds of the registry's clock.
 *
 * @param key the key (valid UTF-8: the decoder refuses anything else)
 * @param state free, held, queued or delayed (PROTOCOL.md sections 5 and 12)
 * @param token the active grant's token; 0 when none
 * @param grantedAgoNanos since the active grant; 0 when none
 * @param leaseRemainingNanos until the active grant's lease ends; 0 when none
 * @param longestLeaseSeconds the longest lease requested for the active grant (Acquire or Extend)
 * @param holder the session that took the active grant; null when none
 * @param waiters queued Acquires
 * @param oldestWaitsRemainingNanos the oldest waiters' remaining waits, oldest first (at most the
 *        number asked for)
 * @param delayedToken in lock-delay: the token whose lease expired; else 0
 * @param delayRemainingNanos in lock-delay: until the delay ends; else 0
 * @param sharedMode the mode of the key's shared holds and shared waiters, which fixes its limit
 *        (PROTOCOL.md section 13.2), while it has any; else null
 * @param sharedHolders the active shared grants, oldest first
 * @param delayedSharedSlots shared slots held by a lock-delay
 * @param oldestWaiterKinds the kinds of the oldest waiters ({@code exclusive} or {@code shared}),
 *        oldest first, as many as {@code oldestWaitsRemainingNanos}
 * @param value the active exclusive grant's value (PROTOCOL.md section 17), or null when it has
 *        none or there is no such grant; a queued acquire's value is never here (17.4)
 */
public record KeyView(String key, State state, long token, long grantedAgoNanos, long leaseRemainingNanos,
        int longestLeaseSeconds, SessionHandle.Peer holder, int waiters, List<Long> oldestWaitsRemainingNanos,
        long delayedToken, long delayRemainingNanos, HoldMode sharedMode, List<SharedHolder> sharedHolders,
        int delayedSharedSlots, List<String> oldestWaiterKinds, byte[] value) {

    /**
     * One active shared grant.
     *
     * @param token its fencing token
     * @param grantedAgoNanos since its grant
     * @param leaseRemainingNanos until its lease ends
     * @param longestLeaseSeconds the longest lease requested for it
     * @param holder the session that took it
     */
    public record SharedHolder(long token, long grantedAgoNanos, long leaseRemainingNanos, int longestLeaseSeconds,
            SessionHandle.Peer holder) {
    }

    /** The key states of PROTOCOL.md section 5, section 12's lock-delay and section 13's shared holds. */
    public enum State {
        FREE, HELD, QUEUED, DELAYED,
        /** Held by shared grants (or shared slots in lock-delay), with or without waiters. */
        SHARED;

        /** Lower case, as the endpoint and the command line print it. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    static KeyView free(byte[] key) {
        return new KeyView(text(key), State.FREE, 0, 0, 0, 0, null, 0, List.of(), 0, 0, null, List.of(), 0, List.of(), null);
    }

    /** Lane lock held; {@code s} settled at {@code now}. */
    static KeyView of(KeyState s, long now, int maxWaits) {
        List<Long> waits = new ArrayList<>(Math.min(maxWaits, s.waiters));
        List<String> kinds = new ArrayList<>(Math.min(maxWaits, s.waiters));
        for (Waiter w = s.head; w != null && waits.size() < maxWaits; w = w.nextInQueue) {
            waits.add(Math.max(0, w.deadline - now));
            kinds.add(w.mode.isShared() ? "shared" : "exclusive");
        }
        List<SharedHolder> shared = new ArrayList<>();
        int delayedShared = 0;
        for (SharedSlot g = s.sharedFirst; g != null; g = g.next) {
            if (g.isActive()) {
                shared.add(new SharedHolder(g.token, now - g.grantNanos, Math.max(0, g.leaseEndNanos - now),
                        g.maxLeaseSeconds, g.holder));
            } else {
                delayedShared++;
            }
        }
        shared.sort(java.util.Comparator.comparingLong(SharedHolder::token));
        State state = s.isHeld() ? (s.waiters > 0 ? State.QUEUED : State.HELD)
                : s.isDelayed() ? State.DELAYED : s.sharedSlots > 0 ? State.SHARED
                : s.waiters > 0 ? State.QUEUED : State.FREE;
        boolean held = s.isHeld();
        return new KeyView(text(s.key), state, held ? s.token : 0, held ? now - s.grantNanos : 0,
                held ? Math.max(0, s.leaseEndNanos - now) : 0, held ? s.maxLeaseSeconds : 0, held ? s.holder : null,
                s.waiters, List.copyOf(waits), s.delayedToken, s.isDelayed() ? Math.max(0, s.delayEndNanos - now) : 0,
                s.sharedMode, List.copyOf(shared), delayedShared, List.copyOf(kinds),
                held && s.value() != null ? s.value().clone() : null);
    }

    private static String text(byte[] key) {
        return new String(key, StandardCharsets.UTF_8);
    }
}
