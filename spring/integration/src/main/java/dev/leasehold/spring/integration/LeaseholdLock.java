package dev.leasehold.spring.integration;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.KeepAlive;
import dev.leasehold.client.LossReason;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;

/**
 * One key's lock from a {@link LeaseholdLockRegistry}: every acquire goes to the Leasehold
 * server, which queues waiters FIFO across threads and JVMs and grants one holder at a time with
 * a fencing token. There is no local mutex; locally the lock only remembers which thread holds
 * it, how many times, and its ticket.
 *
 * <ul>
 * <li><b>Reentrant</b> for the owning thread: a nested acquire renews the lease (Extend) and
 *     counts the hold. If that renewal finds the lease lost, {@code tryLock} returns
 *     {@code false} once (which is how {@code LockRegistryLeaderInitiator} notices), and
 *     {@code lock()} acquires a new grant; the loss stays recorded until the last
 *     {@link #unlock()}, which then throws {@link ConcurrentModificationException}.</li>
 * <li><b>Leases</b> are whole seconds, 1 to 255 ({@code ttl} is rounded up); with renewal on
 *     (the default) the client's keep-alive thread extends the lease every third of it until
 *     {@code unlock()}, and a {@code ttl} above 255 s is allowed (the lease is 255 s, renewed).</li>
 * <li><b>Waits</b> of {@code tryLock(t)} longer than 255 s are made of several server waits,
 *     each losing its place in the queue.</li>
 * <li><b>Outcomes</b>: only Acquired enters. TimedOut: {@code tryLock} returns false,
 *     {@code lock()} waits again. Busy and Indeterminate: back off (100 ms doubling to 1 s) and
 *     retry while time is left. Unavailable (no server reachable): {@code tryLock} throws
 *     {@link CannotAcquireLockException}; {@code lock()} retries up to the registry's
 *     unavailable-timeout, then throws it.</li>
 * </ul>
 */
public final class LeaseholdLock implements DistributedLock {

    private static final Log LOG = LogFactory.getLog(LeaseholdLock.class);
    static final String EXPIRED_MESSAGE = "Lock was released in the store due to expiration. "
            + "The integrity of data protected by this lock may have been compromised.";
    private static final long FOREVER = -1;
    private static final long BACKOFF_START = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long BACKOFF_MAX = TimeUnit.SECONDS.toNanos(1);

    private final LeaseholdLockRegistry registry;
    private final String lockKey;
    private final String serverKey;
    private final Map<Thread, Hold> holds = new ConcurrentHashMap<>();
    private volatile long lastUsedNanos;

    LeaseholdLock(LeaseholdLockRegistry registry, String lockKey, String serverKey) {
        this.registry = registry;
        this.lockKey = lockKey;
        this.serverKey = serverKey;
        this.lastUsedNanos = registry.nanoTime();
    }

    /** One thread's hold: count, ticket, renewal, and whether its lease was lost. */
    private static final class Hold {
        int count;
        Ticket ticket;
        KeepAlive keepAlive;
        volatile LossReason lost;
        boolean lossReported;

        void lostBy(LossReason reason) {
            if (lost == null) {
                lost = reason;
            }
        }
    }

    // ------------------------------------------------------------------ Lock

    /** Acquires with the registry's lease, waiting as long as it takes; uninterruptible (the interrupt status is kept). */
    @Override
    public void lock() {
        lock(registry.defaultLease());
    }

    /** {@link #lock()} with this lease (rounded up to whole seconds). */
    @Override
    public void lock(Duration ttl) {
        int lease = registry.leaseSeconds(ttl);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    acquire(FOREVER, lease, false, Mode.LOCK);
                    return;
                } catch (InterruptedException e) { // only between attempts; go on, as Redis and JDBC do
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Like {@link #lock()}, but an interrupt ends the wait (the pending request is cancelled). */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(FOREVER, registry.leaseSeconds(registry.defaultLease()), true, Mode.LOCK);
    }

    /** One immediate attempt (wait 0 on the server). */
    @Override
    public boolean tryLock() {
        try {
            return acquire(0, registry.leaseSeconds(registry.defaultLease()), false, Mode.TRY);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Waits in the server's FIFO queue for at most {@code time}. */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return acquire(Math.max(0, unit.toNanos(time)), registry.leaseSeconds(registry.defaultLease()), true,
                Mode.TRY);
    }

    /** Waits at most {@code waitTime}; the grant's lease is {@code ttl} (rounded up to whole seconds). */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        return acquire(Math.max(0, waitTime.toNanos()), registry.leaseSeconds(ttl), true, Mode.TRY);
    }

    /**
     * Releases one hold; the last one releases the grant on the server, waiting for the answer
     * even if the thread is interrupted (the interrupt status is kept).
     *
     * @throws IllegalMonitorStateException if the calling thread does not own the lock
     * @throws ConcurrentModificationException if the lease was lost while held (another process
     *         may have held the key meanwhile); the lock is released locally all the same
     */
    @Override
    public void unlock() {
        Thread me = Thread.currentThread();
        Hold h = holds.get(me);
        if (h == null) {
            throw new IllegalMonitorStateException("You do not own lock at " + serverKey);
        }
        lastUsedNanos = registry.nanoTime();
        if (h.count > 1) {
            h.count--;
            return;
        }
        holds.remove(me); // local state first: nothing here is held across the release
        if (h.keepAlive != null) {
            h.keepAlive.close();
        }
        ReleaseOutcome outcome = releaseUninterruptibly(h.ticket);
        if (h.lost != null || outcome != ReleaseOutcome.RELEASED) {
            throw new ConcurrentModificationException(EXPIRED_MESSAGE);
        }
    }

    /** Conditions need a local monitor, which this lock does not have. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by LeaseholdLock");
    }

    // ------------------------------------------------------------------ Leasehold extras

    /** The key as given to {@code obtain}. */
    public String getLockKey() {
        return lockKey;
    }

    /**
     * The fencing token of the calling thread's grant: pass it to the guarded resource with every
     * write.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock
     */
    public long fencingToken() {
        Hold h = holds.get(Thread.currentThread());
        if (h == null) {
            throw new IllegalMonitorStateException("You do not own lock at " + serverKey);
        }
        return h.ticket.token();
    }

    /** True if the calling thread holds the lock (even if its lease was lost meanwhile). */
    public boolean isHeldByCurrentThread() {
        return holds.containsKey(Thread.currentThread());
    }

    /** True if the calling thread holds the lock and its lease is valid and not lost. */
    public boolean isLeaseValid() {
        Hold h = holds.get(Thread.currentThread());
        return h != null && h.lost == null && h.ticket.isValid();
    }

    /** Time left on the calling thread's lease (zero if it does not hold the lock). */
    public Duration remaining() {
        Hold h = holds.get(Thread.currentThread());
        return h == null || h.lost != null ? Duration.ZERO : h.ticket.remaining();
    }

    /** The calling thread's ticket, if it holds the lock. */
    public Optional<Ticket> ticket() {
        Hold h = holds.get(Thread.currentThread());
        return h == null ? Optional.empty() : Optional.of(h.ticket);
    }

    /** The token of any thread's current hold of this lock object (for tests and diagnostics). */
    java.util.OptionalLong anyToken() {
        for (Hold h : holds.values()) {
            if (h.ticket != null && h.lost == null) {
                return java.util.OptionalLong.of(h.ticket.token());
            }
        }
        return java.util.OptionalLong.empty();
    }

    /** True if any thread of this JVM holds this lock object. */
    boolean isHeld() {
        return !holds.isEmpty();
    }

    long lastUsedNanos() {
        return lastUsedNanos;
    }

    /** Renews the calling thread's lease now ({@link LeaseholdLockRegistry#renewLock}). */
    void renew(int leaseSeconds) {
        Hold h = holds.get(Thread.currentThread());
        if (h == null) {
            throw new IllegalMonitorStateException("You do not own lock at " + serverKey);
        }
        if (h.lost != null || !(extendUninterruptibly(h.ticket, leaseSeconds) instanceof ExtendOutcome.Extended)) {
            markLost(h, h.lost != null ? h.lost : LossReason.NOT_HELD);
            throw new IllegalStateException("Could not renew lock for: " + lockKey);
        }
    }

    @Override
    public String toString() {
        return "LeaseholdLock[" + serverKey + ", holders=" + holds.size() + "]";
    }

    // ------------------------------------------------------------------ mechanics

    private enum Mode { LOCK, TRY }

    /**
     * @param waitNanos how long to wait, or FOREVER
     * @param interruptible whether an interrupt ends the wait (InterruptedException)
     * @return true when the calling thread holds the lock
     */
    private boolean acquire(long waitNanos, int lease, boolean interruptible, Mode mode) throws InterruptedException {
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        lastUsedNanos = registry.nanoTime();
        Thread me = Thread.currentThread();
        Hold h = holds.get(me);
        if (h != null) {
            if (h.lost == null) {
                if (extendUninterruptibly(h.ticket, lease) instanceof ExtendOutcome.Extended) {
                    h.count++;
                    return true;
                }
                markLost(h, LossReason.NOT_HELD);
            }
            if (mode == Mode.TRY && !h.lossReported) {
                h.lossReported = true; // the caller learns of the loss once, from this false
                return false;
            }
        }
        Ticket ticket = acquireFromServer(waitNanos, lease, interruptible);
        if (ticket == null) {
            return false;
        }
        if (h != null && h.lossReported && mode == Mode.TRY) {
            holds.remove(me); // the loss was reported: this is a fresh hold
            closeQuietly(h);
            h = null;
        }
        if (h == null) {
            h = new Hold();
            holds.put(me, h);
        } else {
            closeQuietly(h); // the lost grant's renewal; its loss stays recorded
        }
        h.count++;
        h.ticket = ticket;
        h.keepAlive = registry.isRenewal() ? registry.keepAlive(ticket, lease, lockKey, me, h::lostBy) : null;
        lastUsedNanos = registry.nanoTime();
        return true;
    }

    private Ticket acquireFromServer(long waitNanos, int lease, boolean interruptible) throws InterruptedException {
        long start = registry.nanoTime();
        long deadline = start + waitNanos;
        long unavailableSince = 0;
        boolean unavailable = false;
        long backoff = BACKOFF_START;
        boolean first = true;
        while (true) {
            long left = waitNanos == FOREVER ? Long.MAX_VALUE : deadline - registry.nanoTime();
            if (!first && left <= 0) {
                return null;
            }
            first = false;
            int waitSeconds = waitNanos == FOREVER ? 255
                    : (int) Math.min(255, (Math.max(0, left) + 999_999_999L) / 1_000_000_000L);
            CompletableFuture<AcquireOutcome> f = registry.acquireAsync(serverKey, waitSeconds, lease);
            // A wait-0 attempt is bounded by the client (transport deadline); a longer one is cut
            // at the caller's deadline, because the wire wait is rounded up to whole seconds.
            AcquireOutcome o = await(f, waitNanos == FOREVER || waitSeconds == 0 ? Long.MAX_VALUE : deadline,
                    interruptible, waitNanos == FOREVER);
            if (o == null) {
                return null; // the caller's time ran out first
            }
            if (o instanceof AcquireOutcome.Acquired a) {
                return a.ticket();
            }
            if (o instanceof AcquireOutcome.TimedOut) {
                continue; // lock(): wait again at the tail; tryLock: the loop ends on time
            }
            if (o instanceof AcquireOutcome.Unavailable u) {
                if (waitNanos != FOREVER) {
                    throw new CannotAcquireLockException("Leasehold unavailable for " + lockKey + ": " + u.reason());
                }
                long now = registry.nanoTime();
                if (!unavailable) {
                    unavailable = true;
                    unavailableSince = now;
                } else if (now - unavailableSince >= registry.unavailableTimeout().toNanos()) {
                    throw new CannotAcquireLockException("Leasehold unavailable for " + lockKey + " during "
                            + registry.unavailableTimeout() + ": " + u.reason());
                }
            } else {
                unavailable = false;
                if (o instanceof AcquireOutcome.Indeterminate i) {
                    LOG.debug("Indeterminate acquire of " + lockKey + " (" + i.reason() + "); retrying");
                }
            }
            long pause = waitNanos == FOREVER ? backoff : Math.min(backoff, deadline - registry.nanoTime());
            if (pause > 0) {
                pause(pause, interruptible);
            }
            backoff = Math.min(BACKOFF_MAX, backoff * 2);
        }
    }

    /** The outcome, or null if {@code deadline} came first (the call is then cancelled; a late grant is released). */
    private AcquireOutcome await(CompletableFuture<AcquireOutcome> f, long deadline, boolean interruptible,
            boolean checkLiveness) throws InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (deadline == Long.MAX_VALUE && !checkLiveness) {
                        return f.get();
                    }
                    if (deadline == Long.MAX_VALUE) {
                        // A request the client could not send yet waits in its queue until the
                        // call's deadline (up to 255 s): look whether any server answers at all.
                        try {
                            return f.get(registry.unavailableTimeout().toNanos(), TimeUnit.NANOSECONDS);
                        } catch (TimeoutException e) {
                            if (!registry.reachable()) {
                                if (!f.cancel(true)) {
                                    releaseIfAcquired(f);
                                }
                                throw new CannotAcquireLockException("Leasehold unavailable for " + lockKey
                                        + " during " + registry.unavailableTimeout() + ": no Pong");
                            }
                            continue;
                        }
                    }
                    long left = deadline - registry.nanoTime();
                    if (left <= 0) {
                        throw new TimeoutException();
                    }
                    return f.get(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        if (!f.cancel(true)) {
                            releaseIfAcquired(f);
                        }
                        throw e;
                    }
                    interrupted = true;
                } catch (TimeoutException e) {
                    if (f.cancel(true)) {
                        return null;
                    }
                    // completed meanwhile: take that outcome
                } catch (CancellationException e) {
                    return null;
                } catch (ExecutionException e) {
                    return new AcquireOutcome.Indeterminate(String.valueOf(e.getCause()));
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void releaseIfAcquired(CompletableFuture<AcquireOutcome> f) {
        AcquireOutcome o = f.getNow(null);
        if (o instanceof AcquireOutcome.Acquired a) {
            a.ticket().releaseAsync();
        }
    }

    private static void pause(long nanos, boolean interruptible) throws InterruptedException {
        if (interruptible) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } else {
            LockSupport.parkNanos(nanos); // lock() does not end on interrupt; the status is kept
        }
    }

    /** Extends, waiting for the answer even if interrupted (the client bounds it by the lease end). */
    private static ExtendOutcome extendUninterruptibly(Ticket ticket, int leaseSeconds) {
        CompletableFuture<ExtendOutcome> f = ticket.extendAsync(leaseSeconds);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    return new ExtendOutcome.Expired();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private ReleaseOutcome releaseUninterruptibly(Ticket ticket) {
        try {
            return ticket.releaseUninterruptibly();
        } catch (IllegalStateException e) {
            LOG.warn("Release of " + lockKey + " failed: " + e.getMessage());
            return ReleaseOutcome.EXPIRED;
        }
    }

    private void markLost(Hold h, LossReason reason) {
        if (h.lost == null) {
            h.lost = reason;
            if (h.keepAlive != null) {
                h.keepAlive.close();
            }
        }
    }

    private static void closeQuietly(Hold h) {
        if (h.keepAlive != null) {
            h.keepAlive.close();
        }
        if (h.ticket != null && !h.ticket.isReleased()) {
            h.ticket.releaseAsync();
        }
    }
}
