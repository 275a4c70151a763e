package dev.leasehold.registry;

/**
 * Guards lease ends against restarts (PROTOCOL.md section 8): no {@code A} or {@code E} may be
 * sent whose lease end passes the persisted lease horizon. The registry asks
 * {@link #approve(long, long)} under a lane lock for every grant and Extend: the answer is
 * known at once, from memory. A lease the stored horizon does not cover yet is still granted in
 * memory, but its answer is handed to {@link #whenDurable(Durable)} and sent only once the
 * horizon store has fsync'd a horizon that covers it (on the store's thread, never an event
 * loop). Holding the answer, not the grant, is what makes this safe: a crash before the write
 * loses a grant nobody was told about.
 */
public interface LeaseHorizon {

    /** What {@link #approve(long, long)} decided. */
    enum Approval {
        /** The lease end is on disk already: answer at once. */
        ON_DISK,
        /** Grant (or extend) now, but send the answer only after {@link #whenDurable(Durable)} says so. */
        AFTER_WRITE,
        /** The horizon cannot be written (failing disk, or the server is stopping): refuse. */
        REFUSED
    }

    /** Receives the outcome of the horizon write an answer waited for. */
    @FunctionalInterface
    interface Durable {
        /** @param onDisk true once every lease approved before the wait is on disk; false if the write failed */
        void then(boolean onDisk);
    }

    /**
     * Records that a lease granted or extended at {@code nowNanos} ends at {@code leaseEndNanos}
     * (monotonic) and says whether its answer may go out now. Never blocks.
     */
    Approval approve(long nowNanos, long leaseEndNanos);

    /**
     * Runs {@code then} once every lease approved so far is on disk: at once on the caller's
     * thread if it already is and nothing else waits, otherwise on the horizon store's thread
     * after its write. Callbacks run in the order of the calls (a session's {@code X} after the
     * {@code A} it owed for an earlier frame).
     */
    void whenDurable(Durable then);

    /** For servers that accept the risk of running without a recovery grace, and for tests. */
    LeaseHorizon UNBOUNDED = new LeaseHorizon() {
        @Override
        public Approval approve(long nowNanos, long leaseEndNanos) {
            return Approval.ON_DISK;
        }

        @Override
        public void whenDurable(Durable then) {
            then.then(true);
        }
    };
}
