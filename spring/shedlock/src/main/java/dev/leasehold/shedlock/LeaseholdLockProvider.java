package dev.leasehold.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;

/**
 * A ShedLock {@link ExtensibleLockProvider} over a Leasehold server.
 *
 * <ul>
 * <li><b>No cross-node clock.</b> {@code lockAtMostFor} and {@code lockAtLeastFor} are measured
 *     from the moment of {@link #lock} on this JVM's monotonic clock, and the server's leases on
 *     its own: the {@code createdAt} wall-clock instant of the configuration is not used, so
 *     nodes with skewed clocks cannot both run a task.</li>
 * <li><b>lockAtMostFor</b> is the lease (whole seconds, rounded up). Above 255 s (the protocol's
 *     longest lease) the provider extends the lease internally until {@code lockAtMostUntil}, so
 *     the key frees at most about a second after it.</li>
 * <li><b>lockAtLeastFor</b>: {@code unlock()} before {@code lockAtLeastUntil} keeps the grant
 *     (extending it if needed) and releases it at {@code lockAtLeastUntil} on the provider's
 *     timer thread. If this JVM stops first, the key frees when the lease ends, never earlier.</li>
 * <li><b>Fencing token</b> inside the task: {@link LeaseholdShedLock#currentToken()}.</li>
 * <li><b>Outcomes</b>: Acquired → the lock; TimedOut (another node holds it) → empty; Busy and
 *     Indeterminate → empty with a warning; Unavailable (no server reachable) →
 *     {@link LockException}.</li>
 * <li><b>Extend</b> cannot shorten a lease: {@code extend(atMost, atLeast)} asks the server for
 *     at least {@code atMost} more.</li>
 * <li>Not reentrant: a second {@code lock} of a held name is empty, even on the same thread.</li>
 * </ul>
 *
 * <p>Keys on the server are {@code <keyPrefix><name>} (default prefix {@code shedlock/}), 1 to
 * {@link LeaseholdClient#MAX_KEY_BYTES} (512) bytes of valid UTF-8 without a newline.
 * {@link #close()} ends the timer thread (pending delayed releases are dropped; those keys free at
 * their lease end); it does not close the client.
 */
public class LeaseholdLockProvider implements ExtensibleLockProvider, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseholdLockProvider.class);
    private static final long SECOND = 1_000_000_000L;

    private final LeaseholdClient client;
    private final String keyPrefix;
    private final ScheduledThreadPoolExecutor timer;
    private volatile AcquireObserver acquireObserver = AcquireObserver.NONE;
    private volatile LongSupplier clock = System::nanoTime;
    private volatile int maxLease = LeaseholdClient.MAX_LEASE_SECONDS;

    /** A provider with key prefix {@code shedlock/}. */
    public LeaseholdLockProvider(LeaseholdClient client) {
        this(client, "shedlock/");
    }

    /**
     * @param client the Leasehold client (not closed by the provider)
     * @param keyPrefix put before each lock name to make the server key
     */
    public LeaseholdLockProvider(LeaseholdClient client, String keyPrefix) {
        if (client == null || keyPrefix == null || keyPrefix.contains("\n")) {
            throw new IllegalArgumentException("a client and a key prefix without a newline are required");
        }
        this.client = client;
        this.keyPrefix = keyPrefix;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "leasehold-shedlock-timer");
            t.setDaemon(true);
            return t;
        });
        this.timer.setRemoveOnCancelPolicy(true);
    }

    /** Observes each acquire (the Spring Boot starter records Micrometer observations with it). */
    public void setAcquireObserver(AcquireObserver observer) {
        this.acquireObserver = observer == null ? AcquireObserver.NONE : observer;
    }

    /** The longest lease asked for ({@link LeaseholdClient#MAX_LEASE_SECONDS}; tests lower it to exercise the extension). */
    void setMaxLeaseSeconds(int seconds) {
        this.maxLease = seconds;
    }

    /** The monotonic clock (tests). */
    void setClock(LongSupplier clock) {
        this.clock = clock;
    }

    /**
     * One immediate attempt (wait 0) at the lock of {@code cfg.getName()}.
     *
     * @return the lock, or empty if another holder has it (or the outcome was Busy or Indeterminate)
     * @throws LockException if no Leasehold server was reachable
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration cfg) {
        String key = serverKey(cfg.getName());
        long start = clock.getAsLong();
        long atMostUntil = start + cfg.getLockAtMostFor().toNanos();
        long atLeastUntil = start + cfg.getLockAtLeastFor().toNanos();
        int lease = seconds(cfg.getLockAtMostFor().toNanos());
        AcquireOutcome outcome = await(acquireObserver.observe("shedlock", key,
                () -> client.acquireAsync(key, 0, lease)));
        if (outcome instanceof AcquireOutcome.Acquired a) {
            Grant grant = new Grant(key, a.ticket());
            grant.keepUntil(atMostUntil);
            LeaseholdShedLock.push(a.ticket());
            return Optional.of(new Lock(cfg, grant, atMostUntil, atLeastUntil));
        }
        if (outcome instanceof AcquireOutcome.TimedOut) {
            LOG.debug("Lock {} is held elsewhere", key);
            return Optional.empty();
        }
        if (outcome instanceof AcquireOutcome.Unavailable u) {
            throw new LockException("Leasehold unavailable for lock " + key + ": " + u.reason());
        }
        if (outcome instanceof AcquireOutcome.Forbidden f) {
            throw new LockException("Leasehold refuses lock " + key + ": " + f.reason());
        }
        LOG.warn("Lock {} not acquired: {}", key, outcome);
        return Optional.empty();
    }

    /** Ends the timer thread; delayed releases not yet done are dropped (those keys free at lease end). */
    @Override
    public void close() {
        timer.shutdownNow();
    }

    @Override
    public String toString() {
        return "LeaseholdLockProvider[" + keyPrefix + "]";
    }

    private String serverKey(String name) {
        String key = keyPrefix + name;
        try {
            LeaseholdClient.checkKey(key);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("lock name '" + name + "' gives server key '" + key + "': "
                    + e.getMessage(), e);
        }
        return key;
    }

    /** Whole seconds, rounded up, 1 to 255. */
    private int seconds(long nanos) {
        return (int) Math.max(1, Math.min(maxLease, (nanos + SECOND - 1) / SECOND));
    }

    private static AcquireOutcome await(CompletableFuture<AcquireOutcome> f) {
        try {
            return getUninterruptibly(f); // bounded by the client: transport deadline + response grace
        } catch (ExecutionException e) {
            return new AcquireOutcome.Indeterminate(String.valueOf(e.getCause()));
        }
    }

    /**
     * {@code f}'s value, waiting through interrupts: a scheduler's interrupt must not turn a grant
     * into a skipped run whose grant nobody releases. The interrupt status is kept for the task.
     */
    private static <T> T getUninterruptibly(CompletableFuture<T> f) throws ExecutionException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * One grant and its upkeep: extended (on the timer) while {@link #keepUntil} is ahead of the
     * ticket's validity, released at once or at a given instant.
     */
    private final class Grant {
        final String key;
        final Ticket ticket;
        private long keepUntil;
        private ScheduledFuture<?> upkeep;
        private ScheduledFuture<?> delayedRelease;

        Grant(String key, Ticket ticket) {
            this.key = key;
            this.ticket = ticket;
        }

        /**
         * Keep the lease until {@code until}. A lease (rounded up) covers up to 255 s on the server
         * by itself; beyond that the timer extends it every third of a lease while needed.
         */
        synchronized void keepUntil(long until) {
            keepUntil = until;
            if (upkeep == null && until - clock.getAsLong() > maxLease * SECOND
                    && ticket.validUntilNanos() - until < 0) {
                long period = Math.max(SECOND / 10, Math.min(maxLease * SECOND / 3,
                        (ticket.validUntilNanos() - clock.getAsLong()) / 3));
                upkeep = timer.scheduleWithFixedDelay(this::upkeep, period, period, TimeUnit.NANOSECONDS);
            }
        }

        private void upkeep() {
            long left;
            synchronized (this) {
                left = keepUntil - clock.getAsLong();
                if (left <= 0 || ticket.isReleased() || ticket.validUntilNanos() - keepUntil >= 0) {
                    stopUpkeep();
                    return;
                }
            }
            ticket.extendAsync(seconds(left)).thenAccept(o -> {
                if (!(o instanceof ExtendOutcome.Extended)) {
                    LOG.warn("Lock {} (token {}) could not be kept: {}; another node may run the task",
                            key, ticket.token(), o);
                    synchronized (this) {
                        stopUpkeep();
                    }
                }
            });
        }

        private void stopUpkeep() {
            if (upkeep != null) {
                upkeep.cancel(false);
                upkeep = null;
            }
        }

        /** Releases now, waiting for the answer. */
        void releaseNow() {
            synchronized (this) {
                stopUpkeep();
                if (delayedRelease != null) {
                    delayedRelease.cancel(false);
                }
            }
            try {
                report(ticket.releaseUninterruptibly());
            } catch (IllegalStateException e) {
                LOG.warn("Release of lock {} failed: {}", key, e.getMessage());
            }
        }

        /** Keeps the grant until {@code at}, then releases it on the timer. */
        void releaseAt(long at) {
            synchronized (this) {
                keepUntil(at);
                if (delayedRelease != null) {
                    delayedRelease.cancel(false);
                }
                delayedRelease = timer.schedule(() -> {
                    synchronized (this) {
                        stopUpkeep();
                    }
                    ticket.releaseAsync().thenAccept(this::report);
                }, Math.max(0, at - clock.getAsLong()), TimeUnit.NANOSECONDS);
            }
        }

        private void report(ReleaseOutcome outcome) {
            if (outcome != ReleaseOutcome.RELEASED) {
                LOG.warn("Lock {} (token {}): the task outlived its lease ({}); another node may have run it",
                        key, ticket.token(), outcome);
            }
        }
    }

    /** The lock handed to ShedLock; {@link #token()} is its fencing token. */
    public final class Lock extends AbstractSimpleLock {

        private final Grant grant;
        private final long atMostUntil;
        private final long atLeastUntil;

        Lock(LockConfiguration cfg, Grant grant, long atMostUntil, long atLeastUntil) {
            super(cfg);
            this.grant = grant;
            this.atMostUntil = atMostUntil;
            this.atLeastUntil = atLeastUntil;
        }

        /** The fencing token of this grant. */
        public long token() {
            return grant.ticket.token();
        }

        @Override
        protected void doUnlock() {
            LeaseholdShedLock.pop(grant.ticket);
            long now = clock.getAsLong();
            if (atLeastUntil - now <= 0) {
                grant.releaseNow();
                return;
            }
            if (grant.ticket.validUntilNanos() - atLeastUntil < 0) { // the lease would end too early
                grant.ticket.extend(seconds(atLeastUntil - now));
            }
            grant.releaseAt(atLeastUntil);
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
            long now = clock.getAsLong();
            if (now - atMostUntil >= 0) { // past lockAtMostFor: the lock is over
                LeaseholdShedLock.pop(grant.ticket);
                grant.releaseNow();
                return Optional.empty();
            }
            long newAtMost = newConfiguration.getLockAtMostFor().toNanos();
            ExtendOutcome o = grant.ticket.extend(seconds(newAtMost));
            if (!(o instanceof ExtendOutcome.Extended)) {
                LeaseholdShedLock.pop(grant.ticket);
                return Optional.empty();
            }
            grant.keepUntil(now + newAtMost);
            return Optional.of(new Lock(newConfiguration, grant, now + newAtMost,
                    now + newConfiguration.getLockAtLeastFor().toNanos()));
        }
    }
}
