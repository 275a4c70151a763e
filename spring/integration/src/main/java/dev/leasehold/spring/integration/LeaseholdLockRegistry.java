package dev.leasehold.spring.integration;

import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.core.log.LogAccessor;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.integration.util.CheckedCallable;
import org.springframework.integration.util.CheckedRunnable;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.KeepAlive;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.LossReason;
import dev.leasehold.client.Ticket;

/**
 * Spring Integration's {@code LockRegistry} over a Leasehold server: fenced, strictly FIFO locks
 * whose leases are renewed while held, and that say so when they are lost.
 *
 * <pre>{@code
 * LeaseholdLockRegistry registry = new LeaseholdLockRegistry(client, "orders");
 * LeaseholdLock lock = registry.obtain("order-42");
 * lock.lock();
 * try {
 *     store.write(order, lock.fencingToken());
 * } finally {
 *     lock.unlock();   // ConcurrentModificationException if the lease was lost meanwhile
 * }
 * }</pre>
 *
 * <p>Keys must be {@code String}s; the server key is {@code si/<registryKey>/<key>} and must be 1
 * to {@link LeaseholdClient#MAX_KEY_BYTES} (512) bytes of valid UTF-8 without a newline. Every
 * acquire goes to the server, so threads of this JVM, other registries and other JVMs queue in
 * one FIFO order. Leases default to 30 s and are renewed every third of a lease on the client's
 * keep-alive thread until {@code unlock()} ({@link #setRenewal(boolean)}); a lost lease fires the
 * {@link LeaseLostListener}, a {@link LeaseholdLeaseLostEvent} and, if asked, interrupts the
 * owner. See {@link LeaseholdLock} for each method's behaviour and the outcome mapping.
 *
 * <p>The registry caches one lock object per key (evicting only unheld ones). An evicted lock
 * object stays safe to use: only the server arbitrates.
 */
public class LeaseholdLockRegistry implements ExpirableLockRegistry<LeaseholdLock>,
        RenewableLockRegistry<LeaseholdLock>, ApplicationEventPublisherAware, DisposableBean {

    private static final LogAccessor LOG = new LogAccessor(LeaseholdLockRegistry.class);
    /** The default lease, renewed while held. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** How long {@code lock()} retries while no server is reachable. */
    public static final Duration DEFAULT_UNAVAILABLE_TIMEOUT = Duration.ofSeconds(30);
    /** Lock objects cached at most. */
    public static final int DEFAULT_CAPACITY = 100_000;

    private final LeaseholdClient client;
    private final String prefix;
    private final LinkedHashMap<String, LeaseholdLock> locks = new LinkedHashMap<>(16, 0.75f, true);

    private volatile Duration lease = DEFAULT_LEASE;
    private volatile boolean renewal = true;
    private volatile Duration unavailableTimeout = DEFAULT_UNAVAILABLE_TIMEOUT;
    private volatile int capacity = DEFAULT_CAPACITY;
    private volatile LeaseLostListener leaseLostListener = (key, token, reason) -> { };
    private volatile boolean interruptOwnerOnLeaseLoss;
    private volatile ApplicationEventPublisher eventPublisher;
    private volatile AcquireObserver acquireObserver = AcquireObserver.NONE;
    private volatile LongSupplier clock = System::nanoTime;

    /** A registry with the registry key {@code default} (server keys {@code si/default/<key>}). */
    public LeaseholdLockRegistry(LeaseholdClient client) {
        this(client, "default");
    }

    /**
     * @param client the Leasehold client (the registry does not close it)
     * @param registryKey names this registry's keys on the server: {@code si/<registryKey>/<key>};
     *        registries with the same registry key share locks
     */
    public LeaseholdLockRegistry(LeaseholdClient client, String registryKey) {
        if (client == null) {
            throw new IllegalArgumentException("client is required");
        }
        if (registryKey == null || registryKey.isEmpty() || registryKey.contains("\n")) {
            throw new IllegalArgumentException("registryKey must be non-empty without a newline");
        }
        this.client = client;
        this.prefix = "si/" + registryKey + "/";
    }

    // ------------------------------------------------------------------ settings

    /** The lease of {@code lock()}/{@code tryLock()} without a ttl; whole seconds (rounded up), default 30 s. */
    public void setLeaseDuration(Duration lease) {
        leaseSeconds(lease);
        this.lease = lease;
    }

    /** Whether held locks are kept alive (Extend every lease/3) until unlock; default true. */
    public void setRenewal(boolean renewal) {
        this.renewal = renewal;
    }

    /** How long {@code lock()} retries while no server is reachable before throwing; default 30 s. */
    public void setUnavailableTimeout(Duration unavailableTimeout) {
        if (unavailableTimeout == null || unavailableTimeout.isNegative()) {
            throw new IllegalArgumentException("unavailableTimeout must be zero or more");
        }
        this.unavailableTimeout = unavailableTimeout;
    }

    /** Lock objects cached at most; default 100 000. */
    public void setCacheCapacity(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.capacity = capacity;
    }

    /** Hears leases lost while held. */
    public void setLeaseLostListener(LeaseLostListener listener) {
        this.leaseLostListener = listener == null ? (key, token, reason) -> { } : listener;
    }

    /** Interrupt the owning thread when its lease is lost (off by default). */
    public void setInterruptOwnerOnLeaseLoss(boolean interrupt) {
        this.interruptOwnerOnLeaseLoss = interrupt;
    }

    /** Observes each acquire (the Spring Boot starter records Micrometer observations with it). */
    public void setAcquireObserver(AcquireObserver observer) {
        this.acquireObserver = observer == null ? AcquireObserver.NONE : observer;
    }

    @Override
    public void setApplicationEventPublisher(ApplicationEventPublisher publisher) {
        this.eventPublisher = publisher;
    }

    /** The monotonic clock for cache ages (tests move it). */
    void setClock(LongSupplier clock) {
        this.clock = clock;
    }

    // ------------------------------------------------------------------ LockRegistry

    /**
     * The lock of {@code lockKey}, one object per key while cached.
     *
     * @throws IllegalArgumentException if the key is not a String or its server key is refused
     *         ({@link #serverKey})
     * @throws CannotAcquireLockException if the cache is full of held locks
     */
    @Override
    public LeaseholdLock obtain(Object lockKey) {
        if (!(lockKey instanceof String key)) {
            throw new IllegalArgumentException("Leasehold lock keys must be Strings, not " + lockKey);
        }
        String serverKey = serverKey(key);
        synchronized (locks) {
            LeaseholdLock lock = locks.get(key);
            if (lock != null) {
                return lock;
            }
            if (locks.size() >= capacity && !evictOneUnheld()) {
                throw new CannotAcquireLockException("Could not obtain a lock for " + key + ": all "
                        + capacity + " cached locks are held");
            }
            lock = new LeaseholdLock(this, key, serverKey);
            locks.put(key, lock);
            return lock;
        }
    }

    /**
     * A fenced read/write lock on {@code lockKey} (PROTOCOL.md section 13, docs/shared.md): its
     * read lock is a shared grant (many readers), its write lock an exclusive one, on the same
     * server key as {@link #obtain}'s lock, so {@code obtain(key)} and this write lock exclude
     * each other and the readers. Each hold is leased for {@link #setLeaseDuration the lease} and
     * exposes its fencing token; holds are <em>not</em> renewed (use
     * {@code LeaseholdClient.keepAlive} on the hold's ticket for long reads). A new view per call:
     * cheap, nothing cached.
     *
     * @throws IllegalArgumentException if the server key is refused ({@link #serverKey})
     */
    public dev.leasehold.client.FencedReadWriteLock obtainReadWriteLock(String lockKey) {
        return client.readWriteLock(serverKey(lockKey), leaseSeconds(lease));
    }

    /**
     * A fenced semaphore of {@code permits} on {@code lockKey} (docs/shared.md, "at most N at
     * once"): each permit is a ticket with its own fencing token, leased for
     * {@link #setLeaseDuration the lease}, not renewed. Every user of the key must pass the same
     * {@code permits}.
     *
     * @throws IllegalArgumentException if the server key is refused or permits is outside 1..65535
     */
    public dev.leasehold.client.FencedSemaphore obtainSemaphore(String lockKey, int permits) {
        return client.semaphore(serverKey(lockKey), permits, leaseSeconds(lease));
    }

    /** Drops cached locks that are not held and were last used more than {@code age} ms ago. */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = nanoTime();
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
        synchronized (locks) {
            locks.values().removeIf(l -> !l.isHeld() && now - l.lastUsedNanos() > ageNanos);
        }
    }

    /**
     * Renews the calling thread's lease of {@code lockKey} now, with the registry's lease.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold it
     * @throws IllegalStateException if the lease was already lost
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, lease);
    }

    /** {@link #renewLock(Object)} with this lease (whole seconds, 1 to 255). */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        LeaseholdLock lock;
        synchronized (locks) {
            lock = locks.get(lockKey);
        }
        if (lock == null) {
            throw LeaseholdLock.notOwner(prefix + lockKey);
        }
        int seconds = Math.min(LeaseholdClient.MAX_LEASE_SECONDS, leaseSeconds(ttl));
        lock.renew(seconds);
    }

    // ------------------------------------------------------------------ executeLocked

    /** Like the default, but an unlock failure is added to the task's exception instead of replacing it. */
    @Override
    public <E extends Throwable> void executeLocked(Object lockKey, CheckedRunnable<E> runnable)
            throws E, InterruptedException {
        executeLocked(lockKey, () -> {
            runnable.run();
            return null;
        });
    }

    /** Like the default, but an unlock failure is added to the task's exception instead of replacing it. */
    @Override
    public <T, E extends Throwable> T executeLocked(Object lockKey, CheckedCallable<T, E> callable)
            throws E, InterruptedException {
        LeaseholdLock lock = obtain(lockKey);
        lock.lockInterruptibly();
        return runAndUnlock(lock, callable);
    }

    /** Like the default, but an unlock failure is added to the task's exception instead of replacing it. */
    @Override
    public <E extends Throwable> void executeLocked(Object lockKey, Duration waitLockDuration,
            CheckedRunnable<E> runnable) throws E, InterruptedException, TimeoutException {
        executeLocked(lockKey, waitLockDuration, () -> {
            runnable.run();
            return null;
        });
    }

    /** Like the default, but an unlock failure is added to the task's exception instead of replacing it. */
    @Override
    public <T, E extends Throwable> T executeLocked(Object lockKey, Duration waitLockDuration,
            CheckedCallable<T, E> callable) throws E, InterruptedException, TimeoutException {
        LeaseholdLock lock = obtain(lockKey);
        if (!lock.tryLock(waitLockDuration.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("The lock [" + lockKey + "] was not acquired in time: " + waitLockDuration);
        }
        return runAndUnlock(lock, callable);
    }

    /**
     * Runs {@code callable} under the lock of {@code lockKey}, waiting at most
     * {@code waitLockDuration}, and passes it the fencing token.
     *
     * @throws TimeoutException if the lock was not acquired in time
     */
    public <T, E extends Throwable> T executeLocked(Object lockKey, Duration waitLockDuration,
            FencedCallable<T, E> callable) throws E, InterruptedException, TimeoutException {
        LeaseholdLock lock = obtain(lockKey);
        if (!lock.tryLock(waitLockDuration.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("The lock [" + lockKey + "] was not acquired in time: " + waitLockDuration);
        }
        long token = lock.fencingToken();
        return runAndUnlock(lock, () -> callable.call(token));
    }

    private static <T, E extends Throwable> T runAndUnlock(LeaseholdLock lock, CheckedCallable<T, E> callable)
            throws E {
        T result;
        try {
            result = callable.call();
        } catch (Throwable task) {
            try {
                lock.unlock();
            } catch (RuntimeException unlock) {
                task.addSuppressed(unlock);
            }
            throw task;
        }
        lock.unlock();
        return result;
    }

    /** Nothing to close: the client belongs to the caller, renewals end with their locks. */
    @Override
    public void destroy() {
        synchronized (locks) {
            locks.clear();
        }
    }

    @Override
    public String toString() {
        return "LeaseholdLockRegistry[" + prefix + "]";
    }

    // ------------------------------------------------------------------ for LeaseholdLock

    long nanoTime() {
        return clock.getAsLong();
    }

    Duration defaultLease() {
        return lease;
    }

    boolean isRenewal() {
        return renewal;
    }

    Duration unavailableTimeout() {
        return unavailableTimeout;
    }

    /** Whole seconds, rounded up; over the longest lease (255 s) only with renewal on (then 255 s, renewed). */
    int leaseSeconds(Duration ttl) {
        if (ttl == null || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("the lease must be positive, not " + ttl);
        }
        long seconds = (ttl.toNanos() + 999_999_999L) / 1_000_000_000L;
        if (seconds > LeaseholdClient.MAX_LEASE_SECONDS) {
            if (!renewal) {
                throw new IllegalArgumentException("a lease over " + LeaseholdClient.MAX_LEASE_SECONDS
                        + " s needs renewal on; got " + ttl);
            }
            return LeaseholdClient.MAX_LEASE_SECONDS;
        }
        return (int) seconds;
    }

    CompletableFuture<AcquireOutcome> acquireAsync(String serverKey, int waitSeconds, int leaseSeconds) {
        return acquireObserver.observe("spring-integration", serverKey,
                () -> client.acquireAsync(serverKey, waitSeconds, leaseSeconds));
    }

    /** A millisecond wait: an {@code M} on a 1.4 session, whole seconds rounded up on a 1.3 one. */
    CompletableFuture<AcquireOutcome> acquireAsync(String serverKey, Duration wait, int leaseSeconds) {
        return acquireObserver.observe("spring-integration", serverKey,
                () -> client.acquireAsync(serverKey, wait, leaseSeconds));
    }

    /** Whether the client sends waits to the millisecond now (revision 1.4 servers). */
    boolean millisecondWaits() {
        return client.millisecondWaits();
    }

    /** True if a server answers a Ping within the client's transport deadline. */
    boolean reachable() {
        try {
            client.ping();
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    KeepAlive keepAlive(Ticket ticket, int leaseSeconds, String lockKey, Thread owner, Consumer<LossReason> onLost) {
        return client.keepAlive(ticket, leaseSeconds, (t, reason, detail) -> {
            onLost.accept(reason);
            LOG.warn(() -> "Lease of lock " + lockKey + " (token " + t.token() + ") lost: " + detail);
            try {
                leaseLostListener.leaseLost(lockKey, t.token(), reason);
            } catch (RuntimeException e) {
                LOG.warn(e, "LeaseLostListener failed");
            }
            ApplicationEventPublisher publisher = eventPublisher;
            if (publisher != null) {
                try {
                    publisher.publishEvent(new LeaseholdLeaseLostEvent(this, lockKey, t.token(), reason));
                } catch (RuntimeException e) {
                    LOG.warn(e, "Publishing LeaseholdLeaseLostEvent failed");
                }
            }
            if (interruptOwnerOnLeaseLoss) {
                owner.interrupt();
            }
        });
    }

    private boolean evictOneUnheld() {
        Iterator<Map.Entry<String, LeaseholdLock>> it = locks.entrySet().iterator();
        while (it.hasNext()) { // access order: the least recently obtained first
            if (!it.next().getValue().isHeld()) {
                it.remove();
                return true;
            }
        }
        return false;
    }

    /** Lock objects cached now. */
    int cacheSize() {
        synchronized (locks) {
            return locks.size();
        }
    }

    /** The token some thread of this registry holds {@code lockKey} with (tests and diagnostics). */
    java.util.Optional<Long> heldToken(String lockKey) {
        LeaseholdLock lock;
        synchronized (locks) {
            lock = locks.get(lockKey);
        }
        if (lock == null) {
            return java.util.Optional.empty();
        }
        java.util.OptionalLong t = lock.anyToken();
        return t.isPresent() ? java.util.Optional.of(t.getAsLong()) : java.util.Optional.empty();
    }

    /**
     * The key on the server for {@code lockKey}.
     *
     * @throws IllegalArgumentException if {@code lockKey} is empty, or the server key is not 1 to
     *         {@link LeaseholdClient#MAX_KEY_BYTES} bytes of valid UTF-8 without a newline
     */
    public String serverKey(String lockKey) {
        String serverKey = prefix + lockKey;
        try {
            if (lockKey.isEmpty()) {
                throw new IllegalArgumentException("the lock key is empty");
            }
            LeaseholdClient.checkKey(serverKey);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("lock key '" + lockKey + "' gives server key '" + serverKey + "': "
                    + e.getMessage(), e);
        }
        return serverKey;
    }
}
