package dev.leasehold.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The client's keep-alive thread: one daemon thread, started on the first
 * {@link LeaseholdClient#keepAlive}, that runs every {@link KeepAlive}'s schedule and calls the
 * listeners. It only sends Extends asynchronously and never waits for an answer, so one thread
 * serves any number of tickets.
 */
final class KeepAliveTimer {

    private final String threadName;
    private final Set<KeepAlive> active = ConcurrentHashMap.newKeySet();
    private ScheduledThreadPoolExecutor timer;
    private boolean closed;

    KeepAliveTimer(String threadName) {
        this.threadName = threadName;
    }

    KeepAlive keep(Ticket ticket, int leaseSeconds, LeaseListener listener) {
        ScheduledThreadPoolExecutor t;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the client is closed");
            }
            if (timer == null) {
                timer = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread thread = new Thread(r, threadName);
                    thread.setDaemon(true);
                    return thread;
                });
                timer.setRemoveOnCancelPolicy(true);
            }
            t = timer;
        }
        KeepAlive[] self = new KeepAlive[1];
        KeepAlive k = new KeepAlive(ticket, leaseSeconds, listener, t, System::nanoTime,
                () -> active.remove(self[0]));
        self[0] = k;
        active.add(k);
        return k.start();
    }

    /** Every ticket still kept alive is lost (CLIENT_CLOSED, on the keep-alive thread); then the thread ends. */
    void close() {
        ScheduledThreadPoolExecutor t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = timer;
        }
        if (t == null) {
            return;
        }
        List<KeepAlive> left = new ArrayList<>(active);
        try {
            t.execute(() -> left.forEach(KeepAlive::clientClosed));
        } catch (RuntimeException ignored) {
            left.forEach(KeepAlive::clientClosed);
        }
        t.shutdown();
        try {
            t.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        t.shutdownNow();
    }
}
