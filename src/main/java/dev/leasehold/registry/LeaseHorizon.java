package dev.leasehold.registry;

/**
 * Guards lease ends against restarts: a grant or an extension whose lease would end after the
 * persisted horizon must not be answered until the horizon covers it (PROTOCOL.md section 8).
 * Called under a lane lock: implementations answer from memory and persist ahead of need on
 * their own thread.
 */
@FunctionalInterface
public interface LeaseHorizon {

    /** True if a lease ending at {@code leaseEndNanos} (monotonic) is covered right now. */
    boolean covers(long leaseEndNanos);

    /** For servers that accept the risk of running without a recovery grace, and for tests. */
    LeaseHorizon UNBOUNDED = end -> true;
}
