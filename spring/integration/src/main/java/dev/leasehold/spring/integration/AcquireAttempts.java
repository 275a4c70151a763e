package dev.leasehold.spring.integration;

import static dev.leasehold.spring.integration.Waits.FOREVER;

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
 * unavailable-timeout. Stateless between calls: one per lock object.
 */
final class AcquireAttempts {

    private static final LogAccessor LOG = new LogAccessor(AcquireAttempts.class);
    private static final long BACKOFF_START = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long BACKOFF_MAX = TimeUnit.SECONDS.toNanos(1);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final LeaseholdLockRegistry registry;
    private final String lockKey;
    private final String serverKey;

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
            int waitSeconds = forever ? LeaseholdClient.MAX_WAIT_SECONDS
                    : (int) Math.min(LeaseholdClient.MAX_WAIT_SECONDS, (Math.max(0, left) + SECOND - 1) / SECOND);
            CompletableFuture<AcquireOutcome> f = registry.acquireAsync(serverKey, waitSeconds, lease);
            // A wait-0 attempt is bounded by the client (transport deadline); a longer one is cut
            // at the caller's deadline, because the wire wait is rounded up to whole seconds.
            AcquireOutcome o = await(f, forever || waitSeconds == 0 ? FOREVER : deadline - registry.nanoTime(),
                    interruptible, forever);
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
    private AcquireOutcome await(CompletableFuture<AcquireOutcome> f, long timeoutNanos, boolean interruptible,
            boolean watchLiveness) throws InterruptedException {
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
                if (cancel(f)) {
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
