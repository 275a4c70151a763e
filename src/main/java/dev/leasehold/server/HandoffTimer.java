package dev.leasehold.server;

import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.Waiter;

/**
 * Times the hand-off gap: from the server reading a Release that grants a waiter to that
 * waiter's {@code A} being flushed to its socket, on the registry's clock. Called on the
 * waiter's event loop right after the flush that carried the {@code A} (the bytes are then in
 * the kernel's send buffer unless the socket was full, which backpressure makes rare).
 */
final class HandoffTimer {

    static final HandoffTimer NONE = new HandoffTimer(NanoClock.SYSTEM, RegistryObserver.NONE);

    private final NanoClock clock;
    private final RegistryObserver observer;

    HandoffTimer(NanoClock clock, RegistryObserver observer) {
        this.clock = clock;
        this.observer = observer;
    }

    /** One {@code A} with hand-off start {@code startNanos} was just flushed. */
    void flushed(long startNanos) {
        if (startNanos != Waiter.NO_HANDOFF) {
            observer.handedOff(clock.nanoTime() - startNanos);
        }
    }

    /** The first {@code n} starts of {@code starts} were just flushed in one batch (one clock read). */
    void flushed(long[] starts, int n) {
        long now = clock.nanoTime();
        for (int i = 0; i < n; i++) {
            observer.handedOff(now - starts[i]);
        }
    }

    /** Hand-offs of a batch that is written later (cluster mode: after its commit). */
    record Pending(HandoffTimer timer, long[] starts) {

        /** The batch carrying them was just flushed. */
        void flushed() {
            timer.flushed(starts, starts.length);
        }
    }
}
