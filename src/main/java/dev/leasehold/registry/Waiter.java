package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;

/**
 * A queued Acquire. Linked in place into its key's FIFO queue and its lane's timer wheel, so
 * enqueue, grant and cancel are O(1) without extra allocation.
 *
 * <p>Queue links and {@link #outcome} are guarded by the lane lock of {@link #state}; once the
 * outcome is set (under that lock) the waiter is never touched by the registry again, and the
 * {@link WaiterNotifier} may read it from any thread.
 */
public final class Waiter extends TimerNode {

    /** How a waiter left the queue. */
    public enum Outcome {
        WAITING,
        GRANTED,
        /** Answered {@code T}: its wait ran out, or its own session withdrew it ({@code W}). */
        TIMED_OUT,
        BUSY,
        /** Its session closed: no answer is owed. */
        DROPPED
    }

    private final long owner;
    private final int leaseSeconds;
    private final long receiptNanos;
    private final SessionHandle session;
    final KeyState state;
    /** How it asks to hold the key, from its request on: its own admission rule when it reaches the head. */
    final HoldMode mode;
    /**
     * The value its {@code M} carried (PROTOCOL.md 17.2), given to its grant; null for none. Shown
     * nowhere while it waits (17.4).
     */
    final byte[] value;

    Waiter prevInQueue;
    Waiter nextInQueue;

    private volatile Outcome outcome = Outcome.WAITING;
    private long token;
    private long queuedMillis;
    private BusyReason busyReason;
    private boolean awaitsHorizon;
    /** When the Release that handed the key to this waiter was read, or {@link #NO_HANDOFF}. */
    private long handoffStartNanos = NO_HANDOFF;

    /** {@link #handoffStartNanos()} of a waiter not granted by a Release (a lease end, a grace end, a drop). */
    public static final long NO_HANDOFF = Long.MIN_VALUE;

    Waiter(long owner, int leaseSeconds, long receiptNanos, SessionHandle session, KeyState state, HoldMode mode,
            byte[] value) {
        this.mode = mode;
        this.value = value;
        this.owner = owner;
        this.leaseSeconds = leaseSeconds;
        this.receiptNanos = receiptNanos;
        this.session = session;
        this.state = state;
    }

    public long owner() {
        return owner;
    }

    public SessionHandle session() {
        return session;
    }

    /** How it asks to hold the key. */
    public HoldMode mode() {
        return mode;
    }

    public Outcome outcome() {
        return outcome;
    }

    /** The fencing token, when {@link #outcome()} is GRANTED. */
    public long token() {
        return token;
    }

    /** Receipt to grant in whole milliseconds (rounded down), when GRANTED. */
    public long queuedMillis() {
        return queuedMillis;
    }

    /** Why, when {@link #outcome()} is BUSY. */
    public BusyReason busyReason() {
        return busyReason;
    }

    /**
     * When the Release that granted this waiter was read by the server (on the registry's
     * {@link NanoClock}), or {@link #NO_HANDOFF} if something else granted it: the start of the
     * hand-off gap the server measures up to this waiter's {@code A} being flushed.
     */
    public long handoffStartNanos() {
        return handoffStartNanos;
    }

    int leaseSeconds() {
        return leaseSeconds;
    }

    long receiptNanos() {
        return receiptNanos;
    }

    void granted(long grantedToken, long grantNanos) {
        this.token = grantedToken;
        this.queuedMillis = Math.max(0, (grantNanos - receiptNanos) / 1_000_000);
        this.outcome = Outcome.GRANTED;
    }

    /** Set before {@link #granted}: the volatile outcome write publishes it with the grant. */
    void handedOffBy(long releaseReadNanos) {
        this.handoffStartNanos = releaseReadNanos;
    }

    void busy(BusyReason reason) {
        this.busyReason = reason;
        this.outcome = Outcome.BUSY;
    }

    /** Its grant is made, but its answer waits until the lease horizon covers it. */
    void awaitHorizon() {
        this.awaitsHorizon = true;
    }

    boolean awaitsHorizon() {
        return awaitsHorizon;
    }

    /**
     * The horizon write its answer waited for failed: it is answered {@code B} instead. The
     * grant stays in memory, unknown to anyone, until its lease ends.
     */
    void refuseUnwritten() {
        this.busyReason = BusyReason.STORAGE;
        this.outcome = Outcome.BUSY;
    }

    void finish(Outcome how) {
        this.outcome = how;
    }
}
