package dev.leasehold.cluster;

import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon thread on which a cluster node decides its roles: promotion and step-down, roster
 * tending, the majority-heartbeat check and the formation rounds. One thread, so those decisions
 * never race each other. Tasks handed over while it stops are dropped.
 *
 * <p>A task that throws is logged at ERROR and the thread goes on; a periodic task keeps its period.
 * Without this a scheduled executor keeps the exception in a future nobody reads (and ends a
 * periodic task for good): a failed promotion or formation round would leave a node silently
 * unserving.
 */
final class RolesThread {

    private static final Logger LOG = LoggerFactory.getLogger(RolesThread.class);

    private final String name;
    /** Null until {@link #start}; a new one on each start. */
    private volatile ScheduledExecutorService executor;

    RolesThread(String name) {
        this.name = name;
    }

    void start() {
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code task} on the thread soon; dropped while stopping. */
    void execute(Runnable task) {
        ScheduledExecutorService executor = this.executor;
        if (executor != null && !executor.isShutdown()) {
            try {
                executor.execute(guarded(task));
            } catch (RejectedExecutionException e) {
                // stopping
            }
        }
    }

    /** Runs {@code task} on the thread after {@code delayMillis}; dropped while stopping. */
    void schedule(Runnable task, long delayMillis) {
        ScheduledExecutorService executor = this.executor;
        if (executor == null) {
            return;
        }
        try {
            executor.schedule(guarded(task), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // stopping
        }
    }

    /** Runs {@code task} every {@code periodMillis}, the first time after one period. */
    void every(Runnable task, long periodMillis) {
        executor.scheduleWithFixedDelay(guarded(task), periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    private Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                LOG.error("A task on {} failed; the thread goes on", name, e);
            }
        };
    }

    /** True before {@link #start} and after {@link #shutdownNow}. */
    boolean isShutdown() {
        ScheduledExecutorService executor = this.executor;
        return executor == null || executor.isShutdown();
    }

    void shutdownNow() {
        ScheduledExecutorService executor = this.executor;
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
