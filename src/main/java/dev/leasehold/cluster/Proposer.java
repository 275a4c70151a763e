package dev.leasehold.cluster;

import java.util.ArrayList;
import java.util.List;
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
import dev.leasehold.cluster.Command.Check;
import dev.leasehold.cluster.Command.Expire;
import dev.leasehold.cluster.Command.Extend;
import dev.leasehold.cluster.Command.Grant;
import dev.leasehold.cluster.Command.Release;
import dev.leasehold.cluster.Command.Value;
import dev.leasehold.protocol.HoldMode;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.ServingGate;

/**
 * The leader's proposer: collects the registry's decisions (called under lane locks: append to
 * memory, never block), and on its own thread packs them into batches, one Raft log entry each,
 * with at most {@code maxInFlight} batches not yet committed. Batching needs no timer: while
 * batches are in flight the next one fills up, so under load it grows towards {@code maxBatch}
 * and at rest a lone decision goes out at once.
 *
 * <p>Every decision gets a sequence number in append order; the {@link CommitGate} runs answers
 * once every decision up to a barrier has committed (applied on this node). Per key the order of
 * decisions is the order they were made (the registry appends under the key's lane lock).
 *
 * <p>Tokens: issued here from the replicated counter, seeded on promotion
 * ({@link #open(long)}). {@link TokenSource#NONE} (the Acquire is answered Busy) while this node
 * does not serve or while the replication queue is full: nothing is proposed then.
 */
final class Proposer implements DecisionLog, TokenSource {

    private static final Logger LOG = LoggerFactory.getLogger(Proposer.class);

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

    private final CommitGate gate = new CommitGate();

    private Thread thread;
    private volatile boolean running;

    /** One Raft log entry's worth of decisions: the last one's sequence number, and its epoch. */
    private record Batch(List<Command> commands, long end, long epoch) {
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
            gate.open(appended); // nothing older is owed anything
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
        gate.close();
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

    /** The last token this node issued as leader (0 if it never led since it started). */
    long lastIssued() {
        return tokens.get();
    }

    /** A refused token here is a replication matter (queue full, or not serving), not a disk failure. */
    @Override
    public BusyReason noneReason() {
        return BusyReason.REPLICATION;
    }

    // ------------------------------------------------------------------ DecisionLog

    @Override
    public void granted(byte[] key, long token, int leaseSeconds, HoldMode mode, byte[] value) {
        append(new Grant(key, token, leaseSeconds, mode, value));
    }

    @Override
    public void valueSet(byte[] key, long token, byte[] value) {
        append(new Value(key, token, value));
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
    public void expired(byte[] key, long token, int delaySeconds) {
        append(new Expire(key, token, delaySeconds));
    }

    /**
     * Logged as an Expire of the delayed token with no delay: the table ends the delay. A node of
     * an earlier version applies it as the Expire of a token that is not held: no change.
     */
    @Override
    public void delayEnded(byte[] key, long token) {
        append(new Expire(key, token, 0));
    }

    @Override
    public void checked(byte[] key, long token) {
        append(new Check(key, token));
    }

    /** A watch's no-op (PROTOCOL.md 16.8), refused as a token is: while not serving or the queue is full. */
    @Override
    public boolean observed(byte[] key) {
        if (!open || appended - proposed > maxPending) {
            return false;
        }
        append(new Check(key, 0));
        return true;
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
        return gate.committed(barrier);
    }

    void whenCommitted(long barrier, ServingGate.Committed then) {
        gate.whenCommitted(barrier, then);
    }

    // ------------------------------------------------------------------ the proposer thread

    /** One batch in flight more: permit, take a batch, propose it; its completion frees the permit. */
    private void run() {
        while (running) {
            try {
                inFlight.acquire();
            } catch (InterruptedException e) {
                return;
            }
            Batch batch = takeBatch();
            if (batch == null) {
                inFlight.release();
                return;
            }
            propose(batch);
        }
    }

    /** Waits for a decision, then takes up to {@code maxBatch} of them; null when stopping. */
    private Batch takeBatch() {
        lock.lock();
        try {
            while (running && pending.isEmpty()) {
                notEmpty.await(100, TimeUnit.MILLISECONDS);
            }
            if (!running) {
                return null;
            }
            List<Command> commands;
            if (pending.size() <= maxBatch) {
                commands = pending;
                pending = new ArrayList<>();
            } else {
                commands = new ArrayList<>(pending.subList(0, maxBatch));
                pending = new ArrayList<>(pending.subList(maxBatch, pending.size()));
            }
            proposed += commands.size();
            return new Batch(commands, appended - pending.size(), epoch);
        } catch (InterruptedException e) {
            return null;
        } finally {
            lock.unlock();
        }
    }

    private void propose(Batch batch) {
        long start = clock.nanoTime();
        CompletableFuture<?> f;
        try {
            f = sink.apply(CommandCodec.encode(batch.commands()));
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((reply, error) -> complete(batch, start, error));
    }

    /**
     * A batch committed (its answers may go, unless its epoch has ended or failed: see
     * {@link #failedEpoch}) or failed (this node stops serving).
     */
    private void complete(Batch batch, long start, Throwable error) {
        inFlight.release();
        if (error != null) {
            failedEpoch = batch.epoch();
            LOG.warn("Raft proposal of {} decisions failed: {}", batch.commands().size(), error.toString());
            onFailure.accept(error);
            return;
        }
        commitNanos.accept(clock.nanoTime() - start);
        if (batch.epoch() == epoch && batch.epoch() != failedEpoch) {
            gate.committedUpTo(batch.end());
        }
    }
}
