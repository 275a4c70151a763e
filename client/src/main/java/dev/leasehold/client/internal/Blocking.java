package dev.leasehold.client.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The one way the blocking client API waits for a result, and its interrupt policy (documented
 * for users on {@code LeaseholdClient}): an interrupt ends the <i>wait</i>, never silently. The
 * thread's interrupt status is set again and {@code onInterrupt} decides what the caller gets:
 * an Acquire concludes its call and returns the outcome that is true then (Unavailable if not
 * sent, else Indeterminate); Release, Extend and Ping, which keep going in the background,
 * throw {@link IllegalStateException}.
 *
 * <p>The bound is real time measured from the ticker's instants: the timers (on the ticker)
 * normally decide first; the bound guarantees the caller is not held past it if the timer
 * thread runs late (9.11).
 */
public final class Blocking {

    private Blocking() {
    }

    /**
     * Waits for {@code f} at most {@code timeoutNanos}. Timeout: {@code onTimeout}. Interrupt:
     * the interrupt status is restored, then {@code onInterrupt} (which may throw). A failed
     * future rethrows its cause if unchecked, else wraps it in a {@link CompletionException}.
     */
    public static <R> R await(CompletableFuture<R> f, long timeoutNanos, Supplier<R> onTimeout,
            Supplier<R> onInterrupt) {
        try {
            return f.get(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return onTimeout.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return onInterrupt.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new CompletionException(e.getCause());
        }
    }

    /** The {@code onInterrupt} of calls that go on in the background: an IllegalStateException. */
    public static <R> Supplier<R> interrupted(String what) {
        return () -> {
            throw new IllegalStateException("interrupted while waiting for " + what
                    + "; it goes on in the background");
        };
    }
}
