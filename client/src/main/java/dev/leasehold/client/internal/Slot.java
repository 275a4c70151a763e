package dev.leasehold.client.internal;

/**
 * One place of the {@link SessionPool}: its session, if any, the address its next session
 * connects to, and when it may start one. After a full round of addresses that could not be
 * set up it backs off (100 ms doubling to 1 s); after a cluster follower's {@code X 8} it moves
 * to the named leader, or, when none is named, to the next seed after 50 ms doubling to 500 ms
 * (PROTOCOL.md 9.12).
 *
 * <p>Not thread-safe: guarded by the pool's monitor.
 */
final class Slot {

    private static final long MIN_BACKOFF = 100_000_000L;
    private static final long MAX_BACKOFF = 1_000_000_000L;
    /** Between seeds after an {@code X 8} that names no leader (9.12): 50 ms doubling to 500 ms. */
    private static final long NO_LEADER_MIN_BACKOFF = 50_000_000L;
    private static final long NO_LEADER_MAX_BACKOFF = 500_000_000L;

    final int index;
    /** The session in this place, or null. */
    Session session;
    /** The address the next session connects to (an index into the pool's addresses). */
    int addressIndex;
    private int failures;
    private long retryAt;
    private boolean backingOff;
    /** The session is closing after {@code X 8}: its failure count stands (no reset). */
    private boolean notLeader;
    /** {@code X 8} without a usable hint in a row (the back-off between seeds). */
    private int noLeaderRounds;
    /** {@code X 8} naming a leader in a row (every third one backs off). */
    private int hintedRounds;

    Slot(int index, int addressIndex) {
        this.index = index;
        this.addressIndex = addressIndex;
    }

    /** True if a session may start here now: the place is empty and not backing off. */
    boolean mayStart(long now) {
        if (session != null) {
            return false;
        }
        if (backingOff) {
            if (now - retryAt < 0) {
                return false;
            }
            backingOff = false;
        }
        return true;
    }

    /** True while empty and backing off: {@link #retryAt()} is when it may start again. */
    boolean waitsToRetry() {
        return session == null && backingOff;
    }

    long retryAt() {
        return retryAt;
    }

    /** Its session finished the opening handshake. */
    void up() {
        failures = 0;
    }

    /** Its session ended; {@code wasUp} is false when it never came up. */
    void ended(boolean wasUp, int addresses, long now) {
        if (notLeader) {
            notLeader = false; // notLeader...() has set what comes next
        } else if (wasUp) {
            wasUp();
        } else {
            setupFailed(addresses, now);
        }
    }

    /** A session that was up ended: the next one starts afresh. */
    void wasUp() {
        failures = 0;
        hintedRounds = 0;
    }

    /** A session could not be set up: the next address; after a full round of them, back off. */
    void setupFailed(int addresses, long now) {
        failures++;
        addressIndex = (addressIndex + 1) % addresses;
        if (failures % addresses == 0) {
            int rounds = failures / addresses;
            backOffUntil(now + Math.min(MAX_BACKOFF, MIN_BACKOFF << Math.min(rounds - 1, 10)));
        }
    }

    /**
     * {@code X 8} named a leader (the pool moved {@link #addressIndex} to it). Named leaders that
     * answer {@code X 8} too (stale hints while an election runs, two nodes naming each other):
     * an Acquire is resent on every {@code X 8} until D, so every third named leader in a row
     * waits as if none were known.
     */
    void notLeaderNamed(long now) {
        noLeaderRounds = 0;
        notLeader = true; // so that ended() keeps the count
        if (++hintedRounds % 3 == 0) {
            backOffUntil(now + NO_LEADER_MAX_BACKOFF / 2);
        }
    }

    /**
     * {@code X 8} named no leader (an election): the next seed, after 50 ms doubling to 500 ms.
     * Not reset by the follower's Ping answer ({@link #up()}), only by a hint.
     */
    void noLeaderKnown(int addresses, long now) {
        notLeader = true;
        hintedRounds = 0;
        addressIndex = (addressIndex + 1) % addresses;
        backOffUntil(now + Math.min(NO_LEADER_MAX_BACKOFF, NO_LEADER_MIN_BACKOFF << Math.min(noLeaderRounds, 4)));
        noLeaderRounds++;
    }

    private void backOffUntil(long at) {
        backingOff = true;
        retryAt = at;
    }
}
