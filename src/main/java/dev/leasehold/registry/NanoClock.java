package dev.leasehold.registry;

/** Monotonic time in nanoseconds, injected so tests can move time instead of sleeping. */
@FunctionalInterface
public interface NanoClock {

    long nanoTime();

    NanoClock SYSTEM = System::nanoTime;
}
