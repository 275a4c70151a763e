package dev.leasehold.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

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
 * <p>Closing stops the Extends and does not release the ticket: close the ticket for that
 * (try-with-resources closes this first, then the ticket, when they are declared in that order).
 * Thread-safe.
 */
public final class KeepAlive implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");

    private final Ticket ticket;
    private final int leaseSeconds;
    private final LeaseListener listener;
    private final ScheduledExecutorService timer;
    private final LongSupplier nanoClock;
    private final long periodNanos;
    private final Runnable onEnd;

    private boolean closed;
    private LossReason lost;
    private ScheduledFuture<?> nextExtend;
    private ScheduledFuture<?> validityCheck;
    private ScheduledFuture<?> lateCheck;
    private CompletableFuture<ExtendOutcome> pending;

    KeepAlive(Ticket ticket, int leaseSeconds, LeaseListener listener, ScheduledExecutorService timer,
            LongSupplier nanoClock, Runnable onEnd) {
        Arguments.leaseSeconds(leaseSeconds);
        if (ticket == null || listener == null) {
            throw new IllegalArgumentException("ticket and listener are required");
        }
        this.ticket = ticket;
        this.leaseSeconds = leaseSeconds;
        this.listener = listener;
        this.timer = timer;
        this.nanoClock = nanoClock;
        this.periodNanos = TimeUnit.SECONDS.toNanos(leaseSeconds) / 3;
        this.onEnd = onEnd;
    }

    /** Starts the schedule: the first Extend a third of a lease from now. */
    KeepAlive start() {
        timer.execute(() -> {
            synchronized (this) {
                if (closed || lost != null) {
                    return;
                }
                scheduleExtend(periodNanos);
                armValidityCheck();
            }
        });
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

    private void scheduleExtend(long delayNanos) {
        nextExtend = timer.schedule(this::extend, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    }

    private void armValidityCheck() {
        if (validityCheck != null) {
            validityCheck.cancel(false);
        }
        long left = ticket.validUntilNanos() - nanoClock.getAsLong();
        validityCheck = timer.schedule(this::checkValidity, Math.max(0, left), TimeUnit.NANOSECONDS);
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
            lateCheck = timer.schedule(() -> checkLate(sent), periodNanos, TimeUnit.NANOSECONDS);
        }
        f.whenComplete((outcome, error) -> {
            try {
                timer.execute(() -> answered(outcome, error));
            } catch (RuntimeException rejected) { // the client is closing
                answered(outcome, error);
            }
        });
    }

    private void answered(ExtendOutcome outcome, Throwable error) {
        synchronized (this) {
            pending = null;
            if (lateCheck != null) {
                lateCheck.cancel(false);
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
            long left = ticket.validUntilNanos() - nanoClock.getAsLong();
            if (left > 0) { // an Extend moved it meanwhile
                validityCheck = timer.schedule(this::checkValidity, left, TimeUnit.NANOSECONDS);
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
        for (ScheduledFuture<?> f : new ScheduledFuture<?>[] {nextExtend, validityCheck, lateCheck}) {
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    @Override
    public String toString() {
        return "KeepAlive[" + ticket + ", lease=" + leaseSeconds + "s, lost=" + lossReason().orElse(null) + "]";
    }
}
