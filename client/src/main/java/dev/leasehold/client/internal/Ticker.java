package dev.leasehold.client.internal;

/**
 * The client's monotonic clock, in nanoseconds. Every decision the client makes by time (the
 * deadline {@code D}, the wire wait, the response grace, the delivery gate, the Release and
 * Extend bounds) reads this clock and nothing else, so tests can move time instead of sleeping.
 * The real one is {@link #SYSTEM}; instants compare as {@code a - b < 0}.
 */
@FunctionalInterface
public interface Ticker {

    long nanoTime();

    /** {@link System#nanoTime()}. */
    Ticker SYSTEM = System::nanoTime;
}
