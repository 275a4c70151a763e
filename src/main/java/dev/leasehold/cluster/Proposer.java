package dev.leasehold.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.BusyReason;
import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.ReplicatedTable.Command;
import dev.leasehold.registry.ReplicatedTable.Expire;
import dev.leasehold.registry.ReplicatedTable.Extend;
import dev.leasehold.registry.ReplicatedTable.Grant;
import dev.leasehold.registry.ReplicatedTable.Release;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.ServingGate;

/**
 * The leader's proposer: collects the registry's decisions (called under lane locks: append to
 * memory, never block), and on its own thread packs them into batches, one Raft log entry each,
 * with at most {@code maxInFlight} batches not yet committed. Batching needs no timer: while
 * batches are in flight the next one fills up, so under load it grows towards {@code maxBatch}
 * and at rest a lone decision goes out at once.
 *
 * <p>Every decision gets a sequence number in append order; {@link #whenCommitted} runs answers
 * once every decision up to a barrier has committed (applied on this node). Per key the order of
 * decisions is the order they were made (the registry appends under the key's lane lock).
 *
 * <p>Tokens: issued here from the replicated counter, seeded on promotion
 * ({@link #open(long)}). {@link TokenSource#NONE} (the Acquire is answered Busy) while this node
 * does not serve or while the replication queue is full: nothing is proposed then.
 */
final class Proposer implements DecisionLog, TokenSource {

    private static final Logger log = LoggerFactory.getLogger(Proposer.class);

    private final Function<byte[], CompletableFuture<?>> sink;
    private final int maxBatch;
    private final int maxPending;
    private final Semaphore inFlight;
    private final NanoClock clock;
    private final Consumer<Long> commitNanos;
    private final Consumer<Throwable> onFailure;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private List<Command> pending = new ArrayList<>();
    /** Decisions appended so far (the barrier). Written under {@link #lock}. */
    private volatile long appended;
    private volatile long proposed;
    /** Incremented on each {@link #open}/{@link #close}: replies of an older epoch are ignored. */
    private volatile long epoch;
    private volatile boolean open;
    /**
     * The epoch in which a batch failed: no later batch of that epoch counts as committed. Raft
     * commits a prefix, so a later batch cannot commit without the failed one unless the failed
     * one was never appended; its decisions were then never logged and must never be answered.
     */
    private volatile long failedEpoch = -1;

    private final AtomicLong tokens = new AtomicLong();

    /** Answers waiting for a commit, by barrier; guarded by itself. */
    private final PriorityQueue<Waiting> waiting = new PriorityQueue<>();
    private long committed;
    private long waitingOrder;

    private Thread thread;
    private volatile boolean running;

    private record Waiting(long barrier, long order, ServingGate.Committed then) implements Comparable<Waiting> {
        @Override
        public int compareTo(Waiting o) {
            int c = Long.compare(barrier, o.barrier);
            return c != 0 ? c : Long.compare(order, o.order);
        }
    }

    /**
     * @param sink proposes one encoded batch; completes when it has committed and been applied here
     * @param commitNanos observes each batch's propose-to-commit time (a histogram)
     * @param onFailure a batch failed (this node can no longer commit): stop serving
     */
    Proposer(Function<byte[], CompletableFuture<?>> sink, int maxBatch, int maxInFlight, int maxPending,
            NanoClock clock, Consumer<Long> commitNanos, Consumer<Throwable> onFailure) {
        this.sink = sink;
        this.maxBatch = maxBatch;
        this.maxPending = maxPending;
        this.inFlight = new Semaphore(maxInFlight);
        this.clock = clock;
        this.commitNanos = commitNanos;
        this.onFailure = onFailure;
    }

    void start() {
        running = true;
        thread = new Thread(this::run, "leasehold-proposer");
        thread.setDaemon(true);
        thread.start();
    }

    void stop() {
        running = false;
        close();
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Starts accepting decisions (this node serves): tokens continue above {@code counter}. */
    void open(long counter) {
        lock.lock();
        try {
            tokens.set(counter);
            pending = new ArrayList<>();
            epoch++;
            synchronized (waiting) {
                committed = appended; // nothing older is owed anything
            }
            open = true;
        } finally {
            lock.unlock();
        }
    }

    /** Stops accepting decisions; every answer still waiting is dropped ({@code run(false)}). */
    void close() {
        lock.lock();
        try {
            open = false;
            epoch++;
            pending = new ArrayList<>();
        } finally {
            lock.unlock();
        }
        List<Waiting> dropped;
        synchronized (waiting) {
            dropped = new ArrayList<>(waiting);
            waiting.clear();
        }
        for (Waiting w : dropped) {
            w.then().run(false);
        }
    }

    boolean isOpen() {
        return open;
    }

    /** Decisions appended and not yet proposed. */
    int backlog() {
        lock.lock();
        try {
            return pending.size();
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ TokenSource

    @Override
    public long next() {
        if (!open || appended - proposed > maxPending) {
            return TokenSource.NONE; // not serving, or the replication queue is full: Busy, nothing proposed
        }
        return tokens.incrementAndGet();
    }

    /** A refused token here is a replication matter (queue full, or not serving), not a disk failure. */
    @Override
    public BusyReason noneReason() {
        return BusyReason.REPLICATION;
    }

    // ------------------------------------------------------------------ DecisionLog

    @Override
    public void granted(byte[] key, long token, int leaseSeconds) {
        append(new Grant(key, token, leaseSeconds));
    }

    @Override
    public void released(byte[] key, long token) {
        append(new Release(key, token));
    }

    @Override
    public void extended(byte[] key, long token, int leaseSeconds) {
        append(new Extend(key, token, leaseSeconds));
    }

    @Override
    public void expired(byte[] key, long token) {
        append(new Expire(key, token));
    }

    private void append(Command c) {
        lock.lock();
        try {
            if (!open) {
                return; // not serving: nothing is answered either
            }
            pending.add(c);
            appended++;
            if (pending.size() == 1) {
                notEmpty.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ commit gate

    long barrier() {
        return appended;
    }

    /** False while not serving: a decision made then was never logged, so nothing may be answered. */
    boolean committed(long barrier) {
        synchronized (waiting) {
            return open && barrier <= committed && waiting.isEmpty();
        }
    }

    void whenCommitted(long barrier, ServingGate.Committed then) {
        synchronized (waiting) {
            if (!open) {
                then.run(false);
                return;
            }
            if (barrier <= committed && waiting.isEmpty()) {
                then.run(true); // under the lock: keeps the order with callbacks being released
                return;
            }
            waiting.add(new Waiting(barrier, waitingOrder++, then));
            release();
        }
    }

    private void committedUpTo(long seq, long ofEpoch) {
        synchronized (waiting) {
            if (ofEpoch != epoch || ofEpoch == failedEpoch) {
                return;
            }
            committed = Math.max(committed, seq);
            release();
        }
    }

    /** Runs the answers whose barrier has committed, in barrier order. Holds {@link #waiting}. */
    private void release() {
        while (!waiting.isEmpty() && waiting.peek().barrier() <= committed) {
            waiting.poll().then().run(true);
        }
    }

    // ------------------------------------------------------------------ the proposer thread

    private void run() {
        while (running) {
            List<Command> batch;
            long end;
            long ofEpoch;
            try {
                inFlight.acquire();
            } catch (InterruptedException e) {
                return;
            }
            lock.lock();
            try {
                while (running && pending.isEmpty()) {
                    notEmpty.await(100, TimeUnit.MILLISECONDS);
                }
                if (!running) {
                    inFlight.release();
                    return;
                }
                if (pending.size() <= maxBatch) {
                    batch = pending;
                    pending = new ArrayList<>();
                } else {
                    batch = new ArrayList<>(pending.subList(0, maxBatch));
                    pending = new ArrayList<>(pending.subList(maxBatch, pending.size()));
                }
                proposed += batch.size();
                end = appended - pending.size();
                ofEpoch = epoch;
            } catch (InterruptedException e) {
                return;
            } finally {
                if (lock.isHeldByCurrentThread()) {
                    lock.unlock();
                }
            }
            long start = clock.nanoTime();
            CompletableFuture<?> f;
            try {
                f = sink.apply(CommandCodec.encode(batch));
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((reply, error) -> {
                inFlight.release();
                if (error != null) {
                    failedEpoch = ofEpoch;
                    log.warn("Raft proposal of {} decisions failed: {}", batch.size(), error.toString());
                    onFailure.accept(error);
                } else {
                    commitNanos.accept(clock.nanoTime() - start);
                    committedUpTo(end, ofEpoch);
                }
            });
        }
    }
}
