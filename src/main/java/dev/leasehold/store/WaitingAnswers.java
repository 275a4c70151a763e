package dev.leasehold.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.LeaseHorizon.Durable;

/**
 * The answers waiting for the lease horizon to cover them ({@link LeaseHorizonStore#whenDurable}),
 * each with the lease end it needs on disk. The store thread runs them after each write
 * ({@link #runCovered}, with {@code true}) and refuses them all ({@link #refuseAll}, with
 * {@code false}) when a write fails or the store closes.
 *
 * <p>No answer overtakes one that was decided before it: while a callback is queued or running
 * ({@link #idle} is false), a new one must queue behind it rather than run inline. A callback
 * that throws is logged; the others still run.
 */
final class WaitingAnswers {

    private static final Logger LOG = LoggerFactory.getLogger(WaitingAnswers.class);

    /** An answer waiting for the horizon to cover {@code target}. */
    private record Waiting(long target, Durable then) {
    }

    private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    /** Callbacks queued and not yet finished: while any is, a new one queues behind it, never runs inline. */
    private final AtomicInteger unfinished = new AtomicInteger();

    /** True when no callback is queued or running, so one may run inline without overtaking another. */
    boolean idle() {
        return unfinished.get() == 0;
    }

    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /** Queues {@code then} until the horizon covers {@code target} (monotonic nanos). */
    void add(long target, Durable then) {
        unfinished.incrementAndGet();
        waiting.add(new Waiting(target, then));
    }

    /**
     * Runs, in order and with {@code true}, the answers whose target {@code coveredUntilNanos}
     * reaches. Returns true if some still wait: approved after this write began, they need one more.
     */
    synchronized boolean runCovered(long coveredUntilNanos) {
        if (waiting.isEmpty()) {
            return false;
        }
        List<Waiting> ready = new ArrayList<>();
        waiting.removeIf(w -> {
            if (w.target() - coveredUntilNanos <= 0) {
                ready.add(w);
                return true;
            }
            return false;
        });
        for (Waiting w : ready) {
            run(w, true);
        }
        return !waiting.isEmpty();
    }

    /** Runs every waiting answer with {@code false}: the write it waited for failed, or will never come. */
    synchronized void refuseAll() {
        Waiting w;
        while ((w = waiting.poll()) != null) {
            run(w, false);
        }
    }

    private void run(Waiting w, boolean onDisk) {
        try {
            w.then().then(onDisk);
        } catch (RuntimeException e) {
            LOG.error("An answer waiting for the lease horizon failed", e);
        } finally {
            unfinished.decrementAndGet();
        }
    }
}
