package dev.leasehold.client.internal;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs tasks at instants of the client's {@link Ticker}: every deadline and retry of the client
 * goes through one of these. The real one is a single daemon timer thread
 * ({@link #threads}); tests pass a manual one that runs what is due when they move the clock.
 */
public interface Scheduler {

    /** A scheduled task that may still be cancelled. */
    @FunctionalInterface
    interface Timer {
        /** Cancels the task if it has not run; harmless afterwards. */
        void cancel();
    }

    /**
     * Runs {@code task} at {@code atNanos} (an instant of the ticker; one in the past runs as soon
     * as possible). Returns {@code null} once the scheduler is shut down. A task that throws is
     * logged and does not stop the scheduler.
     */
    Timer schedule(Runnable task, long atNanos);

    /** Stops running tasks and waits up to {@code timeoutNanos} for a running one to end. */
    void shutdown(long timeoutNanos) throws InterruptedException;

    /** The real scheduler: one daemon thread named {@code name}, on {@code ticker}'s time. */
    static Scheduler threads(String name, Ticker ticker) {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> Threads.start(name, r, false));
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        System.Logger log = System.getLogger("dev.leasehold.client");
        return new Scheduler() {
            @Override
            public Timer schedule(Runnable task, long atNanos) {
                try {
                    ScheduledFuture<?> f = timer.schedule(() -> {
                        try {
                            task.run();
                        } catch (RuntimeException e) {
                            log.log(System.Logger.Level.ERROR, "timer task failed", e);
                        }
                    }, Math.max(0, atNanos - ticker.nanoTime()), TimeUnit.NANOSECONDS);
                    return () -> f.cancel(false);
                } catch (RejectedExecutionException e) {
                    return null;
                }
            }

            @Override
            public void shutdown(long timeoutNanos) throws InterruptedException {
                timer.shutdownNow();
                timer.awaitTermination(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
            }
        };
    }
}
