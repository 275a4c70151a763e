package dev.leasehold.server;

/**
 * Whether this node serves locks now, and when an answer may be written. Single-node mode is
 * {@link #SINGLE_NODE}: always serving, every answer at once. In cluster mode (PROTOCOL.md
 * section 10) only the leader serves, and an answer that reflects a state change may be written
 * only once the decision has committed: the handler takes a {@link #barrier()} after asking the
 * registry and writes when {@link #whenCommitted} says so.
 */
public interface ServingGate {

    /** True if this node serves lock requests ({@code A}, {@code R}, {@code E}) now. */
    boolean serving();

    /**
     * Increases each time this node starts serving; a session served in one epoch is never
     * served in another (it gets {@code X 9} when the epoch ends).
     */
    long epoch();

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

    /** Single node: always serving, everything committed. */
    ServingGate SINGLE_NODE = new ServingGate() {
        @Override
        public boolean serving() {
            return true;
        }

        @Override
        public long epoch() {
            return 1;
        }

        @Override
        public String leaderHint() {
            return "";
        }

        @Override
        public long barrier() {
            return 0;
        }

        @Override
        public boolean committed(long barrier) {
            return true;
        }

        @Override
        public void whenCommitted(long barrier, Committed then) {
            then.run(true);
        }
    };
}
