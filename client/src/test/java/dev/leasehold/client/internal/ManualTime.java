package dev.leasehold.client.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A {@link Ticker} and a {@link Scheduler} that move only when a test says so. {@link #advance}
 * runs every task that falls due on the way, in time order (ties in scheduling order), each with
 * the clock set to its own instant, on the calling thread: what the client's timer thread would
 * do, without a thread and without sleeping. A task that throws fails the test that moved time.
 */
public final class ManualTime implements Ticker, Scheduler {

    /** One millisecond in nanoseconds. */
    public static final long MS = 1_000_000L;

    private record Task(long at, long seq, Runnable run) {
    }

    private final PriorityQueue<Task> tasks = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at - b.at, 0) : Long.compare(a.seq, b.seq));
    private long now = 7_000_000_000_000L;
    private long seq;
    private boolean shut;
    private Runnable onNextSchedule;

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    /**
     * Runs {@code r} inside the next {@link #schedule} call, after the task is queued and before
     * the caller gets its timer: what another thread may do in that gap (a race made
     * deterministic).
     */
    public void duringNextSchedule(Runnable r) {
        synchronized (this) {
            onNextSchedule = r;
        }
    }

    @Override
    public Timer schedule(Runnable task, long atNanos) {
        Task t;
        Runnable hook;
        synchronized (this) {
            if (shut) {
                return null;
            }
            t = new Task(atNanos, seq++, task);
            tasks.add(t);
            hook = onNextSchedule;
            onNextSchedule = null;
        }
        if (hook != null) {
            hook.run();
        }
        return () -> {
            synchronized (this) {
                tasks.remove(t);
            }
        };
    }

    @Override
    public synchronized void shutdown(long timeoutNanos) {
        shut = true;
        tasks.clear();
    }

    /** Tasks scheduled and neither run nor cancelled. */
    public synchronized int pending() {
        return tasks.size();
    }

    /** Instants of the pending tasks, earliest first. */
    public synchronized List<Long> pendingAt() {
        List<Long> list = new ArrayList<>();
        tasks.stream().sorted(tasks.comparator()).forEach(t -> list.add(t.at));
        return list;
    }

    /** Moves the clock forward by {@code nanos}, running what falls due. */
    public void advance(long nanos) {
        long target;
        synchronized (this) {
            target = now + nanos;
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.at - target > 0) {
                    now = target;
                    return;
                }
                tasks.poll();
                if (next.at - now > 0) {
                    now = next.at;
                }
            }
            next.run.run();
        }
    }

    /** Moves the clock to {@code instant} (not backwards), running what falls due. */
    public void advanceTo(long instant) {
        long d = instant - nanoTime();
        if (d > 0) {
            advance(d);
        }
    }

    public void advanceMillis(long ms) {
        advance(ms * MS);
    }
}
