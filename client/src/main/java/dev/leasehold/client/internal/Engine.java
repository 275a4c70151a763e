package dev.leasehold.client.internal;

import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;

/**
 * The mechanics behind one client: the session pool, one shared timer thread for every deadline,
 * and a small cached pool of delivery threads that complete the caller's futures, so user code
 * never runs on (or blocks) a session's reader or the timer.
 *
 * <p>Threads (all daemons, named {@code <name>-...}): per session a writer and a reader; one
 * {@code -timer}; {@code -deliver-N} threads created on demand and ended after 30 s idle.
 * {@link #close} ends them all.
 */
public final class Engine implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");

    private final Config config;
    private final SessionPool pool;
    private final ScheduledThreadPoolExecutor timer;
    private final ThreadPoolExecutor delivery;
    private final Executor deliveryExecutor;
    private final AtomicLong owners;
    private final AtomicLong nonces;
    private final AtomicReference<Boolean> closed = new AtomicReference<>(false);

    public Engine(Config config) {
        this.config = config;
        Threads timerThreads = new Threads(config.name() + "-timer");
        this.timer = new ScheduledThreadPoolExecutor(1, timerThreads);
        this.timer.setRemoveOnCancelPolicy(true);
        this.timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
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
        this.pool = new SessionPool(this);
    }

    public Config config() {
        return config;
    }

    SessionPool pool() {
        return pool;
    }

    /** Where callers' futures are completed: never a reader, writer or the timer thread. */
    public Executor deliveryExecutor() {
        return deliveryExecutor;
    }

    /**
     * Starts an Acquire: a fresh owner (unique among this client's calls: a counter from a random
     * start), the deadline fixed now, offered to the pool.
     */
    public AcquireCall acquire(byte[] key, int waitSeconds, int leaseSeconds) {
        checkOpen();
        AcquireCall call = new AcquireCall(this, key, waitSeconds, leaseSeconds, owners.getAndIncrement(),
                System.nanoTime());
        call.start();
        pool.submit(call);
        return call;
    }

    /** Starts a Release of {@code token}, retried until {@code giveUpAt}. */
    public TokenCall release(byte[] key, long token, long giveUpAt) {
        checkOpen();
        return startToken(new TokenCall(this, key, token, 0, giveUpAt));
    }

    /** Starts an Extend of {@code token} by {@code leaseSeconds}, retried until {@code giveUpAt}. */
    public TokenCall extend(byte[] key, long token, int leaseSeconds, long giveUpAt) {
        checkOpen();
        return startToken(new TokenCall(this, key, token, leaseSeconds, giveUpAt));
    }

    /** Starts a Ping with the wait=0 transport deadline. */
    public PingCall ping() {
        checkOpen();
        PingCall call = new PingCall(this, nextNonce(), System.nanoTime() + config.transportDeadlineNanos());
        call.start();
        pool.submit(call);
        return call;
    }

    private TokenCall startToken(TokenCall call) {
        call.start();
        pool.submit(call);
        return call;
    }

    /** Releases a grant no caller will see (9.7), retried until {@code giveUpAt}. */
    void compensate(byte[] key, long token, long giveUpAt) {
        if (closed.get()) {
            LOG.log(System.Logger.Level.WARNING, () -> "client closed: cannot release unobserved grant " + token
                    + "; it ends with its lease");
            return;
        }
        TokenCall call = startToken(new TokenCall(this, key, token, 0, giveUpAt));
        call.result().whenComplete((r, e) -> LOG.log(System.Logger.Level.DEBUG,
                () -> "compensating release of token " + token + ": " + (e != null ? e : r)));
    }

    long nextNonce() {
        return nonces.getAndIncrement();
    }

    /** Runs {@code task} on the timer at nanoTime {@code at}; null when the client is closed. */
    ScheduledFuture<?> schedule(Runnable task, long at) {
        try {
            return timer.schedule(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "timer task failed", e);
                }
            }, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Sessions currently pooled (diagnostics and tests). */
    public List<Session> sessions() {
        return pool.sessions();
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
     * delivers what is pending, and ends every thread of this client, waiting up to 2 s.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<Session> sessions = pool.close();
        timer.shutdownNow();
        delivery.shutdown();
        long deadline = System.nanoTime() + 2_000_000_000L;
        try {
            for (Session s : sessions) {
                s.close("the client is closing");
                s.join(deadline);
            }
            timer.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            delivery.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
