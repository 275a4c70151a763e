package dev.leasehold.store;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The lease horizon's own thread ({@code leasehold-horizon-store}): the horizon's writes and
 * fsyncs run here, and so do the answers that waited for one; never on an event loop, never under
 * a lane lock. Only {@link LeaseHorizonStore#open} (the first write, before serving) and
 * {@link LeaseHorizonStore#close()} (the last one, after this thread stopped) write elsewhere.
 *
 * <p>It runs the store's check every period ({@link #start}) and once more on demand
 * ({@link #wake}), as soon as an answer waits for a write. Wake-ups coalesce: at most one is
 * queued at a time, and the check calls {@link #woken} first, so a wake-up during a run queues
 * one more.
 */
final class StoreThread {

    private final ScheduledThreadPoolExecutor executor;
    private final Runnable check;
    private final AtomicBoolean wakeQueued = new AtomicBoolean();
    /** False in tests that run the check themselves: nothing then runs on this thread. */
    private volatile boolean started;

    StoreThread(String name, Runnable check) {
        this.check = check;
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Runs the check every {@code periodNanos}, after a first period, and on every wake-up. */
    void start(long periodNanos) {
        started = true;
        executor.scheduleWithFixedDelay(check, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    /** Runs the check once more soon, unless a run is queued already or the thread has stopped. */
    void wake() {
        if (started && wakeQueued.compareAndSet(false, true)) {
            try {
                executor.execute(check);
            } catch (RejectedExecutionException afterClose) {
                wakeQueued.set(false);
            }
        }
    }

    /** Called first by every run of the check: a wake-up from now on queues another run. */
    void woken() {
        wakeQueued.set(false);
    }

    /** Stops the thread: a run in progress ends (for up to 5 s), nothing more starts. */
    void stop() {
        executor.shutdown();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
