package dev.leasehold.server;

/**
 * The port a cluster node implements (PROTOCOL.md section 10): whether this node serves locks
 * now, and when an answer may be written. Only the leader serves, and an answer that reflects a
 * state change may be written only once the decision has committed: a session takes a
 * {@link #barrier()} after asking the registry and writes when {@link #whenCommitted} says so.
 * Single-node mode has no gate: its sessions write at once ({@link Outboxes#direct()}).
 */
public interface ServingGate {

    /**
     * The epoch this node serves lock requests ({@code A}, {@code R}, {@code E}) in now, or 0
     * while it does not serve. Increases each time this node starts serving; a session served in
     * one epoch is never served in another (it gets {@code X 9} when the epoch ends). One read
     * answers both "serving?" and "since when?", so a request cannot be admitted in one epoch
     * and counted in another.
     */
    long servingEpoch();

    /** The {@code X 8}/{@code X 9} message: {@code leader=host:port}, or empty while no leader is known. */
    String leaderHint();

    /** A position covering every decision made so far: answers written after it commits are safe. */
    long barrier();

    /** True if everything up to {@code barrier} has committed. */
    boolean committed(long barrier);

    /**
     * Runs {@code then.run(true)} once everything up to {@code barrier} has committed, or
     * {@code then.run(false)} if it never will (leadership lost): the answers must then be dropped.
     * Called back on any thread; callbacks for increasing barriers run in that order.
     */
    void whenCommitted(long barrier, Committed then);

    /** Continuation of {@link #whenCommitted}. */
    @FunctionalInterface
    interface Committed {
        void run(boolean committed);
    }
}
