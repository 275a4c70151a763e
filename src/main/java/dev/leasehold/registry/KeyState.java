package dev.leasehold.registry;

/**
 * One key's grant and FIFO queue, and the per-key transitions of the request × key state
 * matrix (PROTOCOL.md section 5) as a deterministic state machine: the instant {@code now} and
 * the next token are inputs, and every transition returns what happened as a value. Nothing here
 * reads a clock, issues a token, touches a counter shared by other keys, a timer or a session:
 * that is the {@link LockRegistry} shell's work (lanes, global limits, timer wheel, delivery).
 *
 * <p>Present in its lane's table while the key is HELD or QUEUED, removed when it becomes FREE.
 * The timer node is the lease end. Guarded by the lock of the lane (or table) that holds it.
 */
final class KeyState extends TimerNode {

    /** What an Acquire meets at its receipt. */
    enum Admission {
        /** FREE: grant at once (subject to the shell's limits). */
        GRANT,
        /** Taken and wait = 0: {@code T} at once. */
        TIMED_OUT,
        /** Taken and wait &gt; 0: join the queue (subject to the shell's limits). */
        ENQUEUE,
        /** A shared acquire whose limit is not the key's: {@code L} (PROTOCOL.md 13.2). */
        MISMATCH
    }

    /** {@link #sharedLimit} when the key has no shared slot and no shared waiter. */
    static final int NO_LIMIT = -1;

    /** The key's exact bytes (compared byte for byte, no normalisation); never modified. */
    final byte[] key;
    /** {@link KeyTable#hash}(key): picks the lane (low bits) and the table slot. */
    final int hash;
    /** Active grant's token, or 0 when no grant is active (only transiently, or during a grace). */
    long token;
    /** The session that took the active grant, for inspect; {@link SessionHandle.Peer#UNKNOWN} if not known. */
    SessionHandle.Peer holder = SessionHandle.Peer.UNKNOWN;
    long grantNanos;
    long leaseEndNanos;
    /**
     * The longest lease (seconds) requested for the active grant, by its Acquire or any Extend.
     * A new cluster leader runs every lease for this long again (PROTOCOL.md section 10).
     */
    int maxLeaseSeconds;
    /** Whether this key counts against max-held-keys (from a grant until it has none, lock-delay included). */
    boolean countedHeld;
    /**
     * Lock-delay (PROTOCOL.md section 12): the token whose lease expired, while the key is granted
     * to nobody until {@link #delayEndNanos}; 0 when not delayed. In the replicated table the
     * delay is a duration only ({@link #delaySeconds}); the leader times it.
     */
    long delayedToken;
    long delayEndNanos;
    int delaySeconds;

    Waiter head;
    Waiter tail;
    int waiters;

    /**
     * Shared holds (PROTOCOL.md section 13): the key's limit while it has shared slots or shared
     * waiters, else {@link #NO_LIMIT}; the slots (active shared grants and delayed ones), their
     * count, and how many of the waiters are shared.
     */
    int sharedLimit = NO_LIMIT;
    SharedGrant sharedFirst;
    int sharedSlots;
    int sharedWaiters;

    KeyState(byte[] key, int hash) {
        this.key = key;
        this.hash = hash;
    }

    boolean isHeld() {
        return token != 0;
    }

    /** True if the active grant's lease has reached its end, processed or not. */
    boolean leaseOver(long now) {
        return now - leaseEndNanos >= 0;
    }

    /** FREE: no active grant, no lock-delay, no shared slot and nobody waiting. */
    boolean isFree() {
        return token == 0 && delayedToken == 0 && sharedSlots == 0 && head == null;
    }

    /** Held exclusively, or in an exclusive grant's lock-delay: no shared grant can be made. */
    boolean exclusiveTaken() {
        return token != 0 || delayedToken != 0;
    }

    /** Has no grant, slot or delay of any kind (waiters or not). */
    boolean noGrants() {
        return token == 0 && delayedToken == 0 && sharedSlots == 0;
    }

    /** In lock-delay: no grant, and none until the delay ends. */
    boolean isDelayed() {
        return delayedToken != 0;
    }

    /** Starts a lock-delay of {@code delayNanos} after {@code expired}'s lease ran out at {@code now}. */
    void delay(long expired, long now, long delayNanos, int seconds) {
        delayedToken = expired;
        delayEndNanos = now + delayNanos;
        delaySeconds = seconds;
        maxLeaseSeconds = 0; // no grant: nothing for a new leader to run again
    }

    /** Ends the lock-delay if it is over at {@code now}: true if it ended now. */
    boolean endDelay(long now) {
        if (delayedToken == 0 || now - delayEndNanos < 0) {
            return false;
        }
        delayedToken = 0;
        delaySeconds = 0;
        return true;
    }

    // ------------------------------------------------------------------ transitions

    /**
     * The matrix row for an Acquire on this (settled) key. {@code heldByGrace}: every key behaves
     * as HELD during a recovery grace (section 5).
     */
    Admission admit(int waitSeconds, boolean heldByGrace) {
        // A delayed key behaves as HELD (section 12): settled before this, so the delay is still running.
        if (isFree() && !heldByGrace) {
            return Admission.GRANT;
        }
        return waitSeconds == 0 ? Admission.TIMED_OUT : Admission.ENQUEUE;
    }

    /**
     * The matrix row for a shared acquire with {@code limit} ({@code slots} = the slots it allows)
     * on this (settled) key: the limit check first (13.2), then FIFO (13.3).
     */
    Admission admitShared(int limit, int slots, int waitSeconds, boolean heldByGrace) {
        if (sharedLimit != NO_LIMIT && sharedLimit != limit) {
            return Admission.MISMATCH;
        }
        if (!heldByGrace && head == null && !exclusiveTaken() && sharedSlots < slots) {
            return Admission.GRANT;
        }
        return waitSeconds == 0 ? Admission.TIMED_OUT : Admission.ENQUEUE;
    }

    /** Adds an active shared slot. */
    SharedGrant grantShared(long newToken, long now, int leaseSeconds, long leaseNanos, int limit) {
        SharedGrant g = new SharedGrant(this, newToken, now, leaseSeconds, leaseNanos);
        g.next = sharedFirst;
        if (sharedFirst != null) {
            sharedFirst.prev = g;
        }
        sharedFirst = g;
        sharedSlots++;
        sharedLimit = limit;
        return g;
    }

    /** The active shared grant with token {@code t}, or null. */
    SharedGrant activeShared(long t) {
        if (t == 0) {
            return null;
        }
        for (SharedGrant g = sharedFirst; g != null; g = g.next) {
            if (g.token == t) {
                return g;
            }
        }
        return null;
    }

    /** Frees a shared slot (Release, expiry without delay, end of its delay). */
    void removeShared(SharedGrant g) {
        if (g.prev == null) {
            sharedFirst = g.next;
        } else {
            g.prev.next = g.next;
        }
        if (g.next != null) {
            g.next.prev = g.prev;
        }
        g.prev = null;
        g.next = null;
        sharedSlots--;
        forgetLimitIfUnused();
    }

    /** One limit per key only while something shared uses it (13.2). */
    void forgetLimitIfUnused() {
        if (sharedSlots == 0 && sharedWaiters == 0) {
            sharedLimit = NO_LIMIT;
        }
    }

    /** Active shared grants (not delayed slots). */
    int activeShared() {
        int n = 0;
        for (SharedGrant g = sharedFirst; g != null; g = g.next) {
            if (g.isActive()) {
                n++;
            }
        }
        return n;
    }

    /** Makes the key HELD by a new grant: {@code newToken} is the next token, issued by the caller. */
    void grant(long newToken, long now, int leaseSeconds, long leaseNanos) {
        token = newToken;
        grantNanos = now;
        leaseEndNanos = now + leaseNanos;
        maxLeaseSeconds = leaseSeconds;
    }

    /** Release of {@code t}: true (and no grant is left) if it is the active grant, else false ({@code N}). */
    boolean release(long t) {
        if (!holds(t)) {
            return false;
        }
        token = 0;
        return true;
    }

    /** True if {@code t} is the active grant's token. */
    boolean holds(long t) {
        return t != 0 && token == t;
    }

    /**
     * Where an Extend of the active grant by {@code leaseNanos} at {@code now} would put the lease
     * end: never earlier than it is (an Extend never shortens a lease).
     */
    long extendedEnd(long now, long leaseNanos) {
        return Math.max(leaseEndNanos, now + leaseNanos);
    }

    /** Applies an Extend decided with {@link #extendedEnd}. */
    void extendTo(long end, int leaseSeconds) {
        leaseEndNanos = end;
        maxLeaseSeconds = Math.max(maxLeaseSeconds, leaseSeconds);
    }

    /**
     * Ends the active grant if its lease is over at {@code now}.
     *
     * @return how long it was held (nanos), or -1 if nothing ended
     */
    long expire(long now) {
        if (!isHeld() || !leaseOver(now)) {
            return -1;
        }
        token = 0;
        return leaseEndNanos - grantNanos;
    }

    /**
     * The waiter to grant next (13.3): an exclusive head once the key has no grant, slot or
     * delay; a shared head while a slot is free ({@code maxSlots} = the slots of the key's
     * limit); else null. Never a waiter behind the head.
     */
    Waiter nextToGrant(boolean heldByGrace, int maxSlots) {
        if (heldByGrace || head == null || exclusiveTaken()) {
            return null;
        }
        if (head.shared) {
            return sharedSlots < maxSlots ? head : null;
        }
        return sharedSlots == 0 ? head : null;
    }

    // ------------------------------------------------------------------ the FIFO queue

    void enqueue(Waiter w) {
        w.prevInQueue = tail;
        w.nextInQueue = null;
        if (tail == null) {
            head = w;
        } else {
            tail.nextInQueue = w;
        }
        tail = w;
        waiters++;
        if (w.shared) {
            sharedWaiters++;
        }
    }

    void unlink(Waiter w) {
        if (w.prevInQueue == null) {
            head = w.nextInQueue;
        } else {
            w.prevInQueue.nextInQueue = w.nextInQueue;
        }
        if (w.nextInQueue == null) {
            tail = w.prevInQueue;
        } else {
            w.nextInQueue.prevInQueue = w.prevInQueue;
        }
        w.prevInQueue = null;
        w.nextInQueue = null;
        waiters--;
        if (w.shared) {
            sharedWaiters--;
            forgetLimitIfUnused();
        }
    }
}
