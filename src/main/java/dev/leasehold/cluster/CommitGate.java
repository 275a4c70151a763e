package dev.leasehold.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

import dev.leasehold.server.ServingGate;

/**
 * Answers waiting for their decisions to commit, released in barrier order as batches commit
 * (the commit half of {@link ServingGate}). A barrier is a decision's sequence number in the
 * {@link Proposer}'s append order. While closed (this node does not serve) nothing counts as
 * committed: a decision made then was never logged, so nothing may be answered. Thread-safe:
 * callbacks run under this object's monitor, in barrier order, then in the order they were added.
 */
final class CommitGate {

    private record Waiting(long barrier, long order, ServingGate.Committed then) implements Comparable<Waiting> {
        @Override
        public int compareTo(Waiting o) {
            int c = Long.compare(barrier, o.barrier);
            return c != 0 ? c : Long.compare(order, o.order);
        }
    }

    private final PriorityQueue<Waiting> waiting = new PriorityQueue<>();
    private boolean open;
    /** Every decision up to this one has committed. */
    private long committed;
    private long order;

    /** Opens for a new epoch: every decision up to {@code appended} was made before it and is owed nothing. */
    synchronized void open(long appended) {
        committed = appended;
        open = true;
    }

    /** Closes: every answer still waiting is dropped ({@code run(false)}), outside the monitor. */
    void close() {
        List<Waiting> dropped;
        synchronized (this) {
            open = false;
            dropped = new ArrayList<>(waiting);
            waiting.clear();
        }
        for (Waiting w : dropped) {
            w.then().run(false);
        }
    }

    /** True if open and everything up to {@code barrier} has committed with nothing waiting before it. */
    synchronized boolean committed(long barrier) {
        return open && barrier <= committed && waiting.isEmpty();
    }

    /** See {@link ServingGate#whenCommitted}. */
    synchronized void whenCommitted(long barrier, ServingGate.Committed then) {
        if (!open) {
            then.run(false);
            return;
        }
        if (barrier <= committed && waiting.isEmpty()) {
            then.run(true); // under the monitor: keeps the order with callbacks being released
            return;
        }
        waiting.add(new Waiting(barrier, order++, then));
        release();
    }

    /** Every decision up to {@code seq} has committed (ignored while closed). */
    synchronized void committedUpTo(long seq) {
        if (!open) {
            return;
        }
        committed = Math.max(committed, seq);
        release();
    }

    /** Runs the answers whose barrier has committed, in barrier order. */
    private void release() {
        while (!waiting.isEmpty() && waiting.peek().barrier() <= committed) {
            waiting.poll().then().run(true);
        }
    }
}
