package dev.leasehold.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.leasehold.client.internal.Scheduler;
import dev.leasehold.client.internal.Ticker;

/**
 * The client's keep-alive thread: one daemon thread, started on the first
 * {@link LeaseholdClient#keepAlive}, that runs every {@link KeepAlive}'s schedule and calls the
 * listeners. It only sends Extends asynchronously and never waits for an answer, so one thread
 * serves any number of tickets. It is not the client's timer thread, so that a listener that
 * takes its time delays no deadline of the client's requests.
 *
 * <p>It reads the client's {@link Ticker}. A client configured with its own {@link Scheduler} (a
 * test's manual clock) runs its keep-alives on that one too, and then no thread is started.
 */
final class KeepAliveTimer {

    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final String threadName;
    private final Ticker ticker;
    private final Scheduler injected;
    private final Set<KeepAlive> active = ConcurrentHashMap.newKeySet();
    /** Open campaigns: the client's close resigns them first (the next candidate leads at once). */
    private final Set<Campaign> campaigns = ConcurrentHashMap.newKeySet();
    private volatile boolean closing;
    private Scheduler timer;
    private boolean closed;

    /** {@code injected} is the configured scheduler, or null for a thread of our own. */
    KeepAliveTimer(String threadName, Ticker ticker, Scheduler injected) {
        this.threadName = threadName;
        this.ticker = ticker;
        this.injected = injected;
    }

    KeepAlive keep(Ticket ticket, int leaseSeconds, LeaseListener listener) {
        Scheduler t;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the client is closed");
            }
            if (timer == null) {
                timer = injected != null ? injected : Scheduler.threads(threadName, ticker);
            }
            t = timer;
        }
        KeepAlive[] self = new KeepAlive[1];
        KeepAlive k = new KeepAlive(ticket, leaseSeconds, listener, t, ticker, () -> active.remove(self[0]));
        self[0] = k;
        active.add(k);
        return k.start();
    }

    /** Registers an open campaign for {@link #close()}; refused once the client is closing. */
    void enlist(Campaign c) {
        campaigns.add(c);
        if (closing) {
            campaigns.remove(c);
            throw new IllegalStateException("the client is closed");
        }
    }

    void discharge(Campaign c) {
        campaigns.remove(c);
    }

    /**
     * Stops every open campaign, waiting for their proofs (a leader's release: the next candidate
     * leads one round trip later, as with {@link Campaign#close()}), each within its stop bound.
     */
    private void stopCampaigns() {
        closing = true;
        List<Campaign> open = new ArrayList<>(campaigns);
        long bound = 0;
        List<CompletableFuture<CampaignEnd>> ends = new ArrayList<>();
        for (Campaign c : open) {
            ends.add(c.stopAsync());
            bound = Math.max(bound, c.stopBoundNanos());
        }
        if (ends.isEmpty()) {
            return;
        }
        try {
            CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new))
                    .get(bound, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // a campaign without proof ends with its lease; the close goes on
        }
    }

    /**
     * Open campaigns stop first ({@link #stopCampaigns}). Then every ticket still kept alive is lost (CLIENT_CLOSED, on the keep-alive thread, which is
     * given a few seconds for that); then the thread ends.
     */
    void close() {
        stopCampaigns();
        Scheduler t;
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
        if (t == injected) { // not ours to stop, and a manual clock would never run a queued task
            left.forEach(KeepAlive::clientClosed);
            return;
        }
        CountDownLatch told = new CountDownLatch(1);
        if (t.schedule(() -> {
            left.forEach(KeepAlive::clientClosed);
            told.countDown();
        }, ticker.nanoTime()) == null) {
            left.forEach(KeepAlive::clientClosed);
            told.countDown();
        }
        try {
            told.await(CLOSE_WAIT_NANOS, TimeUnit.NANOSECONDS);
            t.shutdown(CLOSE_WAIT_NANOS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
