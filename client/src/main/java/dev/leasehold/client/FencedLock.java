package dev.leasehold.client;

import dev.leasehold.protocol.HoldMode;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * One side of a {@link FencedReadWriteLock}: the read lock (a shared grant, {@code S} with limit
 * 0) or the write lock (an exclusive grant, {@code A}), as a {@link Lock} whose holder is the
 * calling thread. Each hold is a {@link Ticket}: pass {@link #token()} to the guarded resource
 * (docs/shared.md shows how a resource fences readers and writers).
 *
 * <p><b>A lease, not a mutex:</b> the hold ends at its lease end unless extended; check
 * {@link #ticket()}'s {@link Ticket#isValid()} before each guarded step, or use a
 * {@link KeepAlive}. Not reentrant: a thread that holds this lock and locks it again gets
 * {@link IllegalStateException}. {@link #lock()} waits as long as it takes, in waits of at most
 * 255 s (the protocol has no endless wait), retrying after a Busy, Unavailable or Indeterminate
 * outcome; {@link #tryLock(long, TimeUnit)} makes one call and returns false on every outcome
 * but a grant. A read lock whose key is used as a semaphore elsewhere throws
 * {@link SharedLimitException}.
 */
public final class FencedLock implements Lock {

    private static final long RETRY_PAUSE_MILLIS = 100;

    private final LeaseholdClient client;
    private final String key;
    private final int leaseSeconds;
    /** Exclusive for the write lock; read for the read lock, permits for a semaphore's permit. */
    private final HoldMode mode;
    private final Map<Thread, Ticket> holds = new ConcurrentHashMap<>();

    FencedLock(LeaseholdClient client, String key, int leaseSeconds, HoldMode mode) {
        this.client = client;
        this.key = key;
        this.leaseSeconds = leaseSeconds;
        this.mode = mode;
    }

    /** True for the read lock (a shared grant), false for the write lock. */
    public boolean isShared() {
        return mode.isShared();
    }

    /** The key. */
    public String key() {
        return key;
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        while (true) {
            try {
                lockInterruptibly();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // lock() is not interruptible: wait on, and restore the status
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        while (!attempt(Duration.ofSeconds(255))) {
            Thread.sleep(RETRY_PAUSE_MILLIS);
        }
    }

    @Override
    public boolean tryLock() {
        return attempt(Duration.ZERO);
    }

    /**
     * Waits at most {@code time} (at most 255 s, the wait every server takes) in the key's queue:
     * to the millisecond on a revision 1.4 server, so {@code tryLock(200, MILLISECONDS)} on a held
     * key returns false after about 200 ms; rounded up to whole seconds on a 1.3 server
     * (PROTOCOL.md 9.13).
     */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return attempt(wait(Duration.ofNanos(Math.max(0, unit.toNanos(time)))));
    }

    /** Releases the calling thread's hold: its exact token, retried until its lease would have ended. */
    @Override
    public void unlock() {
        Ticket t = holds.remove(Thread.currentThread());
        if (t == null) {
            throw new IllegalMonitorStateException("the current thread does not hold " + this);
        }
        t.release();
    }

    /** Not supported: a lease-based lock has no condition variables. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a Leasehold lock has no conditions");
    }

    /**
     * The fencing token of the calling thread's hold.
     *
     * @throws IllegalStateException if the calling thread does not hold this lock
     */
    public long token() {
        return ticket().orElseThrow(() -> new IllegalStateException("the current thread does not hold " + this))
                .token();
    }

    /** The calling thread's hold, if it has one (its validity, extend, check). */
    public Optional<Ticket> ticket() {
        return Optional.ofNullable(holds.get(Thread.currentThread()));
    }

    private boolean attempt(Duration wait) {
        if (holds.containsKey(Thread.currentThread())) {
            throw new IllegalStateException("not reentrant: the current thread already holds " + this);
        }
        AcquireOutcome o = mode.isShared() ? client.acquireShared(key, mode.limit(), wait, leaseSeconds)
                : client.acquire(key, wait, leaseSeconds);
        if (o instanceof AcquireOutcome.LimitMismatch m) {
            throw new SharedLimitException(key, m);
        }
        if (o instanceof AcquireOutcome.Acquired a) {
            holds.put(Thread.currentThread(), a.ticket());
            return true;
        }
        return false;
    }

    @Override
    public String toString() {
        return (mode.isShared() ? "read lock " : "write lock ") + Keys.quoted(key);
    }

    /**
     * A handle's wait: 0 or more, at most 255 s (longer waits are cut to it, as before revision
     * 1.4: every server takes 255 s, PROTOCOL.md 14.4); to the millisecond where the server speaks 1.4.
     */
    static Duration wait(Duration wait) {
        if (wait == null || wait.isNegative()) {
            throw new IllegalArgumentException("wait must be 0 or more, not " + wait);
        }
        Duration max = Duration.ofSeconds(255);
        return wait.compareTo(max) > 0 ? max : wait;
    }
}
