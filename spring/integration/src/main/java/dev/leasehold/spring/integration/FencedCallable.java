package dev.leasehold.spring.integration;

/**
 * A task that runs under a lock and receives its fencing token, to pass with every write to the
 * guarded resource (which refuses tokens lower than the highest it has seen).
 *
 * @param <T> the result
 * @param <E> what the task may throw
 */
@FunctionalInterface
public interface FencedCallable<T, E extends Throwable> {

    /**
     * @param fencingToken the token of the grant the task runs under
     * @return the result
     * @throws E what the task throws
     */
    T call(long fencingToken) throws E;
}
