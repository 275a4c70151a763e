package dev.leasehold.client.internal;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.random.RandomGenerator;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.client.CheckOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.ReleaseOutcome;

/**
 * The mechanics behind one client: the session pool, one scheduler for every deadline and retry
 * (on the configured {@link Ticker}), and a small cached pool of delivery threads that complete
 * the caller's futures, so user code never runs on (or blocks) a session's reader or the timer.
 *
 * <p>Threads (all daemons, named {@code <name>-...}): per session a writer and a reader; one
 * {@code -timer} (unless the configuration brings its own scheduler); {@code -deliver-N} threads
 * created on demand and ended after 30 s idle. {@link #close} ends them all.
 */
public final class Engine implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");
    private static final long CLOSE_WAIT = 2_000_000_000L;

    private final Config config;
    private final Ticker ticker;
    private final Scheduler scheduler;
    private final Dispatcher dispatcher;
    private final ThreadPoolExecutor delivery;
    private final Executor deliveryExecutor;
    private final AtomicLong owners;
    private final AtomicLong nonces;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Requests started and not yet decided, so that close can end those no session holds (one in back-off). */
    private final Set<Outbound<?>> live = ConcurrentHashMap.newKeySet();

    public Engine(Config config) {
        this(config, SessionPool::new);
    }

    /** An engine whose requests go to {@code dispatchers.apply(this)} instead of a session pool (tests). */
    Engine(Config config, Function<Engine, Dispatcher> dispatchers) {
        this.config = config;
        this.ticker = config.ticker();
        this.scheduler = config.scheduler() != null ? config.scheduler()
                : Scheduler.threads(config.name() + "-timer", ticker);
        this.delivery = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                new Threads(config.name() + "-deliver"));
        this.deliveryExecutor = task -> {
            try {
                delivery.execute(task);
            } catch (RejectedExecutionException e) {
                task.run(); // closing: deliver on the calling thread rather than never
            }
        };
        RandomGenerator random = new java.security.SecureRandom();
        this.owners = new AtomicLong(random.nextLong());
        this.nonces = new AtomicLong(random.nextLong());
        this.dispatcher = dispatchers.apply(this);
    }

    public Config config() {
        return config;
    }

    /** The clock of every time decision of this client. */
    public Ticker ticker() {
        return ticker;
    }

    Dispatcher dispatcher() {
        return dispatcher;
    }

    /** Where callers' futures are completed: never a reader, writer or the timer thread. */
    public Executor deliveryExecutor() {
        return deliveryExecutor;
    }

    /**
     * Starts an Acquire: a fresh owner (unique among this client's calls: a counter from a random
     * start), the deadline fixed now, offered to the pool. A grant becomes an outcome through
     * {@code tickets}.
     */
    public AcquireCall acquire(byte[] key, int waitSeconds, int leaseSeconds, AcquireCall.Tickets tickets) {
        return acquire(key, waitSeconds, leaseSeconds, tickets, false);
    }

    /**
     * As {@link #acquire(byte[], int, int, AcquireCall.Tickets)}; {@code callerWaits}: the calling
     * thread blocks for the outcome (and holds no lock), so it may write the request itself when
     * its session is idle.
     */
    public AcquireCall acquire(byte[] key, int waitSeconds, int leaseSeconds, AcquireCall.Tickets tickets,
            boolean callerWaits) {
        return acquire(key, waitSeconds, leaseSeconds, HoldMode.EXCLUSIVE, tickets, callerWaits);
    }

    /**
     * As {@link #acquire(byte[], int, int, AcquireCall.Tickets, boolean)}, for a shared acquire
     * ({@code S}) when {@code mode} is shared (PROTOCOL.md section 13); the same call under every
     * rule of section 9.
     */
    public AcquireCall acquire(byte[] key, int waitSeconds, int leaseSeconds, HoldMode mode,
            AcquireCall.Tickets tickets, boolean callerWaits) {
        return acquireMillis(key, waitSeconds * 1000L, leaseSeconds, mode, tickets, callerWaits);
    }

    /**
     * As {@link #acquire(byte[], int, int, HoldMode, AcquireCall.Tickets, boolean)} with the wait in
     * milliseconds (PROTOCOL.md 9.13): kept to the millisecond where a 1.4 session is expected
     * ({@link Dispatcher#millisecondWaits()}), else rounded up to whole seconds as a 1.3 session
     * takes them. A wait longer than the session it is written on takes ends Unavailable, unsent.
     */
    public AcquireCall acquireMillis(byte[] key, long waitMillis, int leaseSeconds, HoldMode mode,
            AcquireCall.Tickets tickets, boolean callerWaits) {
        return acquireMillis(key, waitMillis, leaseSeconds, mode, AcquireCall.NO_VALUE, tickets, callerWaits);
    }

    /**
     * As {@link #acquireMillis(byte[], long, int, HoldMode, AcquireCall.Tickets, boolean)} for an
     * exclusive grant carrying {@code value} (PROTOCOL.md 9.16.1: at most 1024 bytes, checked by
     * the caller); a session that cannot carry it does not send it: Unavailable.
     */
    public AcquireCall acquireMillis(byte[] key, long waitMillis, int leaseSeconds, HoldMode mode, byte[] value,
            AcquireCall.Tickets tickets, boolean callerWaits) {
        checkOpen();
        long wait = waitMillis % 1000 == 0 || dispatcher.millisecondWaits() ? waitMillis
                : (waitMillis / 1000 + 1) * 1000;
        AcquireCall call = new AcquireCall(this, key, wait, leaseSeconds, mode, value, owners.getAndIncrement(),
                ticker.nanoTime(), tickets);
        track(call);
        call.start();
        dispatcher.submit(call, callerWaits);
        return call;
    }

    /** Starts a Release of {@code token}, retried until {@code giveUpAt}. */
    public TokenCall<ReleaseOutcome> release(byte[] key, long token, long giveUpAt) {
        checkOpen();
        return startToken(TokenCall.release(this, key, token, giveUpAt));
    }

    /**
     * A Release of {@code token}, retried until {@code giveUpAt}, started but not yet offered to a
     * session: the caller offers it with {@link #send} once it holds no lock (a blocked caller may
     * write it itself, and must not hold a monitor an I/O thread could need meanwhile).
     */
    public TokenCall<ReleaseOutcome> prepareRelease(byte[] key, long token, long giveUpAt) {
        checkOpen();
        TokenCall<ReleaseOutcome> call = TokenCall.release(this, key, token, giveUpAt);
        track(call);
        call.start();
        return call;
    }

    /** Offers a call from {@link #prepareRelease}; {@code callerWaits} as in {@link #acquire(byte[], int, int, AcquireCall.Tickets, boolean)}. */
    public void send(TokenCall<?> call, boolean callerWaits) {
        dispatcher.submit(call, callerWaits);
    }

    /** Starts an Extend of {@code token} by {@code leaseSeconds}, retried until {@code giveUpAt}. */
    public TokenCall<ExtendOutcome> extend(byte[] key, long token, int leaseSeconds, long giveUpAt) {
        checkOpen();
        return startToken(TokenCall.extend(this, key, token, leaseSeconds, giveUpAt));
    }

    /** Starts a Check of {@code token}, retried until {@code giveUpAt} (it changes nothing: always safe to repeat). */
    public TokenCall<CheckOutcome> check(byte[] key, long token, long giveUpAt) {
        checkOpen();
        return startToken(TokenCall.check(this, key, token, giveUpAt));
    }

    /** Starts a Value of {@code token} (PROTOCOL.md 9.16), retried until {@code giveUpAt}. */
    public TokenCall<dev.leasehold.client.ProclaimOutcome> value(byte[] key, long token, byte[] value, long giveUpAt) {
        checkOpen();
        return startToken(TokenCall.value(this, key, token, value, giveUpAt));
    }

    /**
     * Starts an observation of {@code key} (PROTOCOL.md 9.15); with {@code protocol-revision} 1.3
     * it fails at once.
     *
     * @throws IllegalStateException if the client is closed or speaks only 1.3
     */
    public Watch observe(String key, byte[] keyBytes, Watch.Listener listener) {
        checkOpen();
        if (config.protocolRevision() == Config.V1_3) {
            throw new IllegalStateException("observe needs revision 1.4, and this client's protocol-revision is 1.3"
                    + " (PROTOCOL.md 9.15.3)");
        }
        Watch w = new Watch(this, key, keyBytes, listener);
        w.start();
        return w;
    }

    /** Offers a subscription to the pool, tracked so that close ends it (no deadline of its own). */
    void submitWatch(ObserveCall call) {
        if (closed.get()) {
            call.abandon("the client is closed");
            return;
        }
        track(call);
        dispatcher.submit(call);
    }

    /** A fresh id from the owners' counter: watch ids and owners never meet (9.15.1). */
    long nextOwner() {
        return owners.getAndIncrement();
    }

    /** Starts a Ping with the wait=0 transport deadline. */
    public PingCall ping() {
        checkOpen();
        PingCall call = new PingCall(this, nextNonce(), ticker.nanoTime() + config.transportDeadlineNanos());
        track(call);
        call.start();
        dispatcher.submit(call);
        return call;
    }

    private <R> TokenCall<R> startToken(TokenCall<R> call) {
        track(call);
        call.start();
        dispatcher.submit(call);
        return call;
    }

    /** Whether an acquire started now keeps its wait to the millisecond ({@link Dispatcher#millisecondWaits()}). */
    public boolean millisecondWaits() {
        return dispatcher.millisecondWaits();
    }

    /** Releases a grant no caller will see (9.7), retried until {@code giveUpAt}. */
    void compensate(byte[] key, long token, long giveUpAt) {
        if (closed.get()) {
            LOG.log(System.Logger.Level.WARNING, () -> "client closed: cannot release unobserved grant " + token
                    + "; it ends with its lease");
            return;
        }
        TokenCall<ReleaseOutcome> call = startToken(TokenCall.release(this, key, token, giveUpAt));
        call.result().whenComplete((r, e) -> LOG.log(System.Logger.Level.DEBUG,
                () -> "compensating release of token " + token + ": " + (e != null ? e : r)));
    }

    private void track(Outbound<?> call) {
        live.add(call);
        call.result().whenComplete((r, e) -> live.remove(call));
    }

    long nextNonce() {
        return nonces.getAndIncrement();
    }

    /** Runs {@code task} at ticker time {@code at}; null when the client is closed. */
    public Scheduler.Timer schedule(Runnable task, long at) {
        return scheduler.schedule(task, at);
    }

    /** Tasks handed to the delivery threads so far (diagnostics and tests). */
    public long deliveries() {
        return delivery.getTaskCount();
    }

    /** Sessions currently pooled (diagnostics and tests). */
    public List<Session> sessions() {
        return dispatcher.sessions();
    }

    public boolean isClosed() {
        return closed.get();
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("the client is closed");
        }
    }

    /**
     * Closes every session (unanswered Acquires end Indeterminate, unsent ones Unavailable),
     * delivers what is pending, and ends every thread of this client, waiting up to 2 s. Real
     * time on purpose: this waits for threads, not for a protocol deadline.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<Session> sessions = dispatcher.close();
        delivery.shutdown();
        long deadline = System.nanoTime() + CLOSE_WAIT;
        try {
            scheduler.shutdown(0);
            for (Session s : sessions) {
                s.close("the client is closing");
                s.join(deadline);
            }
            scheduler.shutdown(Math.max(0, deadline - System.nanoTime()));
            for (Outbound<?> o : List.copyOf(live)) {
                o.abandon("the client is closed"); // e.g. a Release waiting for its retry: no timer will run it
            }
            delivery.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
