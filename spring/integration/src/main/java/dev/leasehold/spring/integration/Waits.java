package dev.leasehold.spring.integration;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Every blocking wait of the lock, in one loop: an interruptible wait ends on an interrupt
 * ({@code lockInterruptibly}, {@code tryLock(t)}); an uninterruptible one ({@code lock()}, the
 * Extend of a reentrant acquire) waits through it, as Redis's and JDBC's locks do, and leaves the
 * interrupt status set for the caller.
 */
final class Waits {

    /** No bound on the wait. */
    static final long FOREVER = -1;

    private Waits() {
    }

    /**
     * {@code f}'s value, waiting at most {@code timeoutNanos} (or {@link #FOREVER}) on {@code clock}.
     *
     * @throws InterruptedException only if {@code interruptible}
     * @throws TimeoutException if the time ran out first
     */
    static <T> T get(CompletableFuture<T> f, long timeoutNanos, boolean interruptible, LongSupplier clock)
            throws InterruptedException, ExecutionException, TimeoutException {
        long end = clock.getAsLong() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return timeoutNanos == FOREVER ? f.get()
                            : f.get(end - clock.getAsLong(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true; // the status was cleared by the throw: the next get waits
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code f}'s value, waiting as long as it takes, through interrupts (the status is kept). */
    static <T> T getUninterruptibly(CompletableFuture<T> f) throws ExecutionException {
        try {
            return get(f, FOREVER, false, System::nanoTime);
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException("an unbounded, uninterruptible wait cannot end so", e);
        }
    }

    /** Sleeps {@code nanos} on {@code clock}; through interrupts unless {@code interruptible}. */
    static void pause(long nanos, boolean interruptible, LongSupplier clock) throws InterruptedException {
        try {
            get(new CompletableFuture<Void>(), nanos, interruptible, clock); // never completes: a timed sleep
        } catch (TimeoutException | ExecutionException slept) {
            // the pause is over
        }
    }
}
