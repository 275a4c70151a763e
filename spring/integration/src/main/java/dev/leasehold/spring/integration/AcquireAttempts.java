package dev.leasehold.spring.integration;

import static dev.leasehold.spring.integration.Waits.FOREVER;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.core.log.LogAccessor;
import org.springframework.dao.CannotAcquireLockException;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Ticket;

/**
 * The server side of acquiring one {@link LeaseholdLock}: Acquire requests until a grant, the
 * caller's deadline, or an error, with the outcome mapping of {@link LeaseholdLock}'s class doc.
 * TimedOut waits again at the queue's tail; Busy and Indeterminate back off (100 ms doubling to
 * 1 s); Unavailable ends a bounded wait at once and an unbounded one after the registry's
 * unavailable-timeout. One per lock object.
 *
 * <h2>On a 1.3 server, a timed-out request keeps its place for the next call</h2>
 * On a revision 1.4 server a timed call sends its wait to the millisecond and the server ends it
 * on time ({@code tryLock(200 ms)} waits 200 ms there too), and an interrupted call's request is
 * withdrawn (PROTOCOL.md 9.13, 9.14): nothing below is needed, and nothing is parked. On a 1.3
 * server the wire wait is whole seconds and there is no cancel on the wire, so a {@code tryLock(200 ms)}
 * leaves its Acquire waiting on the server for up to a second after it returned false. Sent anew
 * by each call, a loop of such calls (as {@code LockRegistryLeaderInitiator} makes every heart
 * beat) kept a trail of stale waiters ahead of its live one: a release handed the key down that
 * trail, each grant coming back to a call that had gone and released at once, and by the end of
 * it the live request could have given up too, letting a later waiter (a yielding leader coming
 * back 50 ms later) take the key ahead of it. So the request of a call that timed out is
 * <em>parked</em>: the next timed call on this lock with the same lease waits on it instead of
 * queueing again at the tail, and a grant that comes while no call waits on it is released at
 * once, as before. At most one request is parked (the oldest, which stands first in the queue);
 * an interrupted call's request is cancelled, never parked.
 */
final class AcquireAttempts {

    private static final LogAccessor LOG = new LogAccessor(AcquireAttempts.class);
    private static final long BACKOFF_START = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long BACKOFF_MAX = TimeUnit.SECONDS.toNanos(1);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);
    /** The longest single wait sent: 255 s, which every server takes (PROTOCOL.md 14.4). */
    private static final long MAX_WAIT_MILLIS = LeaseholdClient.MAX_WAIT_SECONDS * 1000L;

    private final LeaseholdLockRegistry registry;
    private final String lockKey;
    private final String serverKey;
    private final Object parking = new Object();
    private Request parked; // guarded by parking

    /** One Acquire on the wire, and whether a call is waiting on its outcome. */
    private static final class Request {
        final CompletableFuture<AcquireOutcome> outcome;
        final int lease;
        boolean awaited = true; // guarded by parking

        Request(CompletableFuture<AcquireOutcome> outcome, int lease) {
            this.outcome = outcome;
            this.lease = lease;
        }
    }

    AcquireAttempts(LeaseholdLockRegistry registry, String lockKey, String serverKey) {
        this.registry = registry;
        this.lockKey = lockKey;
        this.serverKey = serverKey;
    }

    /**
     * @param waitNanos how long to wait, or {@link Waits#FOREVER}
     * @param interruptible whether an interrupt ends the wait (the pending request is cancelled)
     * @return the grant, or null when the wait ran out first
     * @throws CannotAcquireLockException when no server is reachable (see the class doc)
     */
    Ticket acquire(long waitNanos, int lease, boolean interruptible) throws InterruptedException {
        boolean forever = waitNanos == FOREVER;
        long deadline = registry.nanoTime() + waitNanos;
        long unavailableSince = 0;
        boolean unavailable = false;
        long backoff = BACKOFF_START;
        for (boolean first = true; ; first = false) {
            long left = forever ? Long.MAX_VALUE : deadline - registry.nanoTime();
            if (!first && left <= 0) {
                return null;
            }
            AcquireOutcome o;
            if (!forever && registry.millisecondWaits()) {
                // Revision 1.4: the wait goes out to the millisecond and the server's T ends it on
                // time (PROTOCOL.md 9.13), so nothing is parked. The second of slack only covers a
                // session that turned out to speak 1.3 (its wait rounded up): then parking takes over.
                long waitMillis = Math.min(MAX_WAIT_MILLIS, (Math.max(0, left) + MILLI - 1) / MILLI);
                Request r = send(Duration.ofMillis(waitMillis), lease);
                o = await(r, waitMillis == 0 ? FOREVER : deadline - registry.nanoTime() + SECOND, interruptible, false);
            } else {
                int waitSeconds = forever ? LeaseholdClient.MAX_WAIT_SECONDS
                        : (int) Math.min(LeaseholdClient.MAX_WAIT_SECONDS, (Math.max(0, left) + SECOND - 1) / SECOND);
                Request r = waitSeconds == 0 ? null : adoptParked(lease);
                if (r == null) {
                    r = send(waitSeconds, lease);
                }
                // A wait-0 attempt is bounded by the client (transport deadline); a longer one is cut
                // at the caller's deadline, because a 1.3 wire wait is rounded up to whole seconds.
                o = await(r, forever || waitSeconds == 0 ? FOREVER : deadline - registry.nanoTime(),
                        interruptible, forever);
            }
            if (o == null) {
                return null; // the caller's time ran out first
            }
            if (o instanceof AcquireOutcome.Acquired a) {
                return a.ticket();
            }
            if (o instanceof AcquireOutcome.TimedOut) {
                continue; // lock(): wait again at the tail; tryLock: the loop ends on time
            }
            if (o instanceof AcquireOutcome.Forbidden refused) {
                // definitive, and waiting longer will not change it: the server's ACL refuses the key
                throw new CannotAcquireLockException("Leasehold refuses " + lockKey + ": " + refused.reason());
            }
            if (o instanceof AcquireOutcome.Unavailable u) {
                if (!forever) {
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
                    LOG.debug(() -> "Indeterminate acquire of " + lockKey + " (" + i.reason() + "); retrying");
                }
            }
            long pause = forever ? backoff : Math.min(backoff, deadline - registry.nanoTime());
            if (pause > 0) {
                Waits.pause(pause, interruptible, registry::nanoTime);
            }
            backoff = Math.min(BACKOFF_MAX, backoff * 2);
        }
    }

    /**
     * The outcome, or null if {@code timeoutNanos} (or {@link Waits#FOREVER}) passed first: the
     * call is then cancelled (a grant that arrives anyway is released by the client, or here if it
     * came meanwhile).
     *
     * @param watchLiveness for an unbounded wait: a request the client could not send yet waits in
     *        its queue until the call's deadline (up to 255 s), so every unavailable-timeout look
     *        whether any server answers at all, and give up if none does
     */
    private AcquireOutcome await(Request r, long timeoutNanos, boolean interruptible, boolean watchLiveness)
            throws InterruptedException {
        CompletableFuture<AcquireOutcome> f = r.outcome;
        long slice = watchLiveness ? registry.unavailableTimeout().toNanos() : timeoutNanos;
        while (true) {
            try {
                return Waits.get(f, slice, interruptible, registry::nanoTime);
            } catch (InterruptedException e) {
                cancel(f);
                throw e;
            } catch (TimeoutException e) {
                if (watchLiveness) {
                    if (registry.reachable()) {
                        continue; // a server answers: the request still waits in its queue
                    }
                    cancel(f);
                    throw new CannotAcquireLockException("Leasehold unavailable for " + lockKey + " during "
                            + registry.unavailableTimeout() + ": no Pong");
                }
                if (park(r)) {
                    return null;
                }
                // completed meanwhile: take that outcome
            } catch (CancellationException e) {
                return null;
            } catch (ExecutionException e) {
                return new AcquireOutcome.Indeterminate(String.valueOf(e.getCause()));
            }
        }
    }

    /** Sends an Acquire; an outcome that comes while no call waits on it is let go ({@link #settled}). */
    private Request send(int waitSeconds, int lease) {
        return track(new Request(registry.acquireAsync(serverKey, waitSeconds, lease), lease));
    }

    /** Sends an Acquire with a millisecond wait (an {@code M} on a 1.4 session), as {@link #send(int, int)}. */
    private Request send(Duration wait, int lease) {
        return track(new Request(registry.acquireAsync(serverKey, wait, lease), lease));
    }

    private Request track(Request r) {
        r.outcome.whenComplete((o, e) -> settled(r, o));
        return r;
    }

    /** The parked request, now awaited by the calling thread; null if none fits. */
    private Request adoptParked(int lease) {
        synchronized (parking) {
            Request r = parked;
            if (r == null || r.lease != lease || r.outcome.isDone()) {
                return null; // a done one is settled (its grant released) by its own callback
            }
            parked = null;
            r.awaited = true;
            return r;
        }
    }

    /**
     * Parks a request whose caller's time ran out (see the class doc); false if it completed
     * meanwhile, for the caller to take. A second request is not parked but cancelled: the parked
     * one came first and stands ahead of it in the queue.
     */
    private boolean park(Request r) {
        synchronized (parking) {
            if (r.outcome.isDone()) {
                return false;
            }
            if (parked == null) {
                r.awaited = false;
                parked = r;
                return true;
            }
        }
        return cancel(r.outcome);
    }

    /** On every outcome: one that no call waits on any more ends here, a grant released. */
    private void settled(Request r, AcquireOutcome o) {
        synchronized (parking) {
            if (r.awaited) {
                return; // its call takes the outcome (or cancelled it, and handles a grant)
            }
            if (parked == r) {
                parked = null;
            }
        }
        if (o instanceof AcquireOutcome.Acquired a) {
            a.ticket().releaseAsync();
        }
    }

    /** Cancels the call; false if it had completed, a grant then released. */
    private static boolean cancel(CompletableFuture<AcquireOutcome> f) {
        if (f.cancel(true)) {
            return true;
        }
        if (f.getNow(null) instanceof AcquireOutcome.Acquired a) {
            a.ticket().releaseAsync();
        }
        return false;
    }
}
