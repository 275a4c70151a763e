package dev.leasehold.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.client.internal.Scheduler;
import dev.leasehold.client.internal.Ticker;

/**
 * Keeps one {@link Ticket} alive: an Extend every {@code lease / 3} on the client's keep-alive
 * thread (never an I/O thread), until {@link #close()} or the ticket's release. Made by
 * {@link LeaseholdClient#keepAlive}.
 *
 * <p>The lease is <b>lost</b> ({@link LeaseListener#leaseLost}, once, for good) when an Extend
 * answers NotHeld or Expired, when the ticket's local validity ends without a successful Extend,
 * or when the client closes. An Extend with no answer after a third of the lease makes the lease
 * <b>at risk</b> ({@link LeaseListener#leaseAtRisk}); the answer may still come in time.
 *
 * <p>Every decision by time reads the client's {@link Ticker} and every timer runs on a
 * {@link Scheduler} (the keep-alive thread, or a test's manual clock), so its rules are tested by
 * moving the clock, not by waiting for leases to pass.
 *
 * <p>Closing stops the Extends and does not release the ticket: close the ticket for that
 * (try-with-resources closes this first, then the ticket, when they are declared in that order).
 * Thread-safe.
 */
public final class KeepAlive implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");

    private final Ticket ticket;
    private final int leaseSeconds;
    private final LeaseListener listener;
    private final Scheduler timer;
    private final Ticker ticker;
    private final long periodNanos;
    private final Runnable onEnd;

    private boolean closed;
    private LossReason lost;
    private Scheduler.Timer nextExtend;
    private Scheduler.Timer validityCheck;
    private Scheduler.Timer lateCheck;
    private CompletableFuture<ExtendOutcome> pending;

    KeepAlive(Ticket ticket, int leaseSeconds, LeaseListener listener, Scheduler timer, Ticker ticker,
            Runnable onEnd) {
        Arguments.leaseSeconds(leaseSeconds);
        if (ticket == null || listener == null) {
            throw new IllegalArgumentException("ticket and listener are required");
        }
        this.ticket = ticket;
        this.leaseSeconds = leaseSeconds;
        this.listener = listener;
        this.timer = timer;
        this.ticker = ticker;
        this.periodNanos = TimeUnit.SECONDS.toNanos(leaseSeconds) / 3;
        this.onEnd = onEnd;
    }

    /** Starts the schedule: the first Extend a third of a lease from now. */
    KeepAlive start() {
        boolean scheduled = runSoon(() -> {
            synchronized (this) {
                if (closed || lost != null) {
                    return;
                }
                scheduleExtend(periodNanos);
                armValidityCheck();
            }
        });
        if (!scheduled) {
            clientClosed();
        }
        return this;
    }

    /** The ticket kept alive. */
    public Ticket ticket() {
        return ticket;
    }

    /** The lease each Extend asks for, in seconds. */
    public int leaseSeconds() {
        return leaseSeconds;
    }

    /** True once the lease was lost; it stays lost. */
    public synchronized boolean isLost() {
        return lost != null;
    }

    /** Why the lease was lost, if it was. */
    public synchronized Optional<LossReason> lossReason() {
        return Optional.ofNullable(lost);
    }

    /** Stops extending (idempotent). The ticket is not released; the listener hears nothing more. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            cancelTimers();
        }
    }

    /** The client closes: a ticket still kept alive is lost. */
    void clientClosed() {
        lose(LossReason.CLIENT_CLOSED, "the client was closed");
    }

    /** Runs {@code task} on the keep-alive scheduler as soon as it can; false once it is shut down. */
    private boolean runSoon(Runnable task) {
        return timer.schedule(task, ticker.nanoTime()) != null;
    }

    private Scheduler.Timer after(long delayNanos, Runnable task) {
        return timer.schedule(task, ticker.nanoTime() + Math.max(0, delayNanos));
    }

    private void scheduleExtend(long delayNanos) {
        nextExtend = after(delayNanos, this::extend);
    }

    private void armValidityCheck() {
        if (validityCheck != null) {
            validityCheck.cancel();
        }
        validityCheck = after(ticket.validUntilNanos() - ticker.nanoTime(), this::checkValidity);
    }

    private void extend() {
        CompletableFuture<ExtendOutcome> f;
        synchronized (this) {
            if (closed || lost != null) {
                return;
            }
            if (ticket.isReleased()) { // the owner released it: nothing left to keep alive
                closed = true;
                cancelTimers();
                return;
            }
            try {
                f = ticket.extendAsync(leaseSeconds);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            pending = f;
            CompletableFuture<ExtendOutcome> sent = f;
            lateCheck = after(periodNanos, () -> checkLate(sent));
        }
        f.whenComplete((outcome, error) -> {
            if (!runSoon(() -> answered(outcome, error))) { // the client is closing
                answered(outcome, error);
            }
        });
    }

    private void answered(ExtendOutcome outcome, Throwable error) {
        synchronized (this) {
            pending = null;
            if (lateCheck != null) {
                lateCheck.cancel();
            }
            if (closed || lost != null) {
                return;
            }
            if (ticket.isReleased()) {
                closed = true;
                cancelTimers();
                return;
            }
            if (outcome instanceof ExtendOutcome.Extended) {
                armValidityCheck();
                scheduleExtend(periodNanos);
                return;
            }
        }
        if (outcome instanceof ExtendOutcome.NotHeld) {
            lose(LossReason.NOT_HELD, "Extend of token " + ticket.token() + " answered NotHeld");
        } else if (outcome instanceof ExtendOutcome.Expired) {
            lose(LossReason.VALIDITY_ENDED, "no answer to Extend of token " + ticket.token()
                    + " before the lease would have ended");
        } else {
            lose(LossReason.CLIENT_CLOSED, "Extend of token " + ticket.token() + " failed: " + error);
        }
    }

    private void checkLate(CompletableFuture<ExtendOutcome> sent) {
        synchronized (this) {
            if (closed || lost != null || pending != sent || sent.isDone()) {
                return;
            }
        }
        Duration remaining = ticket.remaining();
        try {
            listener.leaseAtRisk(ticket, remaining);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "lease listener failed", e);
        }
    }

    private void checkValidity() {
        synchronized (this) {
            if (closed || lost != null) {
                return;
            }
            if (ticket.isReleased()) {
                closed = true;
                cancelTimers();
                return;
            }
            long left = ticket.validUntilNanos() - ticker.nanoTime();
            if (left > 0) { // an Extend moved it meanwhile
                validityCheck = after(left, this::checkValidity);
                return;
            }
        }
        lose(LossReason.VALIDITY_ENDED, "the validity of token " + ticket.token()
                + " ended without a successful Extend");
    }

    private void lose(LossReason reason, String detail) {
        synchronized (this) {
            if (closed || lost != null) {
                return;
            }
            lost = reason;
            cancelTimers();
        }
        try {
            listener.leaseLost(ticket, reason, detail);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "lease listener failed", e);
        }
    }

    private void cancelTimers() { // called once, when the keep-alive ends (closed or lost)
        onEnd.run();
        for (Scheduler.Timer t : new Scheduler.Timer[] {nextExtend, validityCheck, lateCheck}) {
            if (t != null) {
                t.cancel();
            }
        }
    }

    @Override
    public String toString() {
        return "KeepAlive[" + ticket + ", lease=" + leaseSeconds + "s, lost=" + lossReason().orElse(null) + "]";
    }
}
