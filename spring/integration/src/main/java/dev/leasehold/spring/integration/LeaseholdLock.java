package dev.leasehold.spring.integration;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import org.springframework.core.log.LogAccessor;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

import dev.leasehold.client.CheckOutcome;
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

    private static final LogAccessor LOG = new LogAccessor(LeaseholdLock.class);
    static final String EXPIRED_MESSAGE = "Lock was released in the store due to expiration. "
            + "The integrity of data protected by this lock may have been compromised.";
    private static final long FOREVER = Waits.FOREVER;

    private final LeaseholdLockRegistry registry;
    private final String lockKey;
    private final String serverKey;
    private final AcquireAttempts attempts;
    private final Map<Thread, Hold> holds = new ConcurrentHashMap<>();
    private volatile long lastUsedNanos;

    LeaseholdLock(LeaseholdLockRegistry registry, String lockKey, String serverKey) {
        this.registry = registry;
        this.lockKey = lockKey;
        this.serverKey = serverKey;
        this.attempts = new AcquireAttempts(registry, lockKey, serverKey);
        this.lastUsedNanos = registry.nanoTime();
    }

    /** What {@code unlock()} and the other owner-only methods throw for a thread that does not hold the lock. */
    static IllegalMonitorStateException notOwner(String serverKey) {
        return new IllegalMonitorStateException("You do not own lock at " + serverKey);
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
        acquireUninterruptibly(FOREVER, registry.leaseSeconds(ttl), Mode.LOCK);
    }

    /** Like {@link #lock()}, but an interrupt ends the wait (the pending request is cancelled). */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        acquire(FOREVER, registry.leaseSeconds(registry.defaultLease()), true, Mode.LOCK);
    }

    /** One immediate attempt (wait 0 on the server). */
    @Override
    public boolean tryLock() {
        return acquireUninterruptibly(0, registry.leaseSeconds(registry.defaultLease()), Mode.TRY);
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
            throw notOwner(serverKey);
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
            throw notOwner(serverKey);
        }
        return h.ticket.token();
    }

    /**
     * Asks the server whether the calling thread's {@link #fencingToken()} is still the key's
     * active grant (PROTOCOL.md section 11, {@link Ticket#check()}), for a guarded resource that
     * cannot remember the highest token it has seen. Blocks for one round trip, at most until the
     * lease would have ended or the client's transport deadline. A lease this lock already knows
     * is lost is {@link CheckOutcome.NotCurrent} without a request. Act only on
     * {@link CheckOutcome.Current}.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock
     */
    public CheckOutcome checkFencingToken() {
        Hold h = holds.get(Thread.currentThread());
        if (h == null) {
            throw notOwner(serverKey);
        }
        return h.lost != null ? new CheckOutcome.NotCurrent() : h.ticket.check();
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
            throw notOwner(serverKey);
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

    /** {@link #acquire} waiting through interrupts (every wait in it does; the status is kept). */
    private boolean acquireUninterruptibly(long waitNanos, int lease, Mode mode) {
        try {
            return acquire(waitNanos, lease, false, mode);
        } catch (InterruptedException e) {
            throw new IllegalStateException("an uninterruptible acquire was interrupted", e); // Waits rules it out
        }
    }

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
        Ticket ticket = attempts.acquire(waitNanos, lease, interruptible);
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

    /** Extends, waiting for the answer even if interrupted (the client bounds it by the lease end). */
    private static ExtendOutcome extendUninterruptibly(Ticket ticket, int leaseSeconds) {
        try {
            return Waits.getUninterruptibly(ticket.extendAsync(leaseSeconds));
        } catch (ExecutionException e) {
            return new ExtendOutcome.Expired();
        }
    }

    private ReleaseOutcome releaseUninterruptibly(Ticket ticket) {
        try {
            return ticket.releaseUninterruptibly();
        } catch (IllegalStateException e) {
            LOG.warn(() -> "Release of " + lockKey + " failed: " + e.getMessage());
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
