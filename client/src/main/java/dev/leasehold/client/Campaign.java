package dev.leasehold.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.leasehold.client.internal.AcquireCall;
import dev.leasehold.client.internal.Engine;
import dev.leasehold.client.internal.Scheduler;
import dev.leasehold.protocol.HoldMode;

/**
 * A candidate in an {@link Election} ({@link Election#campaign}), until {@link #close()}. It waits
 * in the key's FIFO queue with an acquire carrying its identity as the grant's value, queued again
 * at once when a wait ends ({@code T}), after a jittered back-off when an attempt fails (Busy,
 * Unavailable, Indeterminate). A grant that passes the ticket gate (PROTOCOL.md 9.7) starts a term:
 * a keep-alive (an Extend every lease/3, 9.10) and {@link CampaignListener#onStartedLeading}. The
 * term ends at the first of {@link Leadership#resign()}, a lost lease and the ticket's validity
 * minus {@link ElectionOptions#safety()}: then {@link CampaignListener#onStoppedLeading}, the
 * release, and the campaign queues again. It observes the key too (one observation), so the
 * listener hears every leader. Thread-safe.
 */
public final class Campaign implements AutoCloseable {

    private final Election election;
    private final Engine engine;
    private final CampaignListener listener;
    private final ElectionOptions options;
    private final SerialExecutor calls;
    private final LeaderTracker tracker;
    private final byte[] keyBytes;
    private final byte[] identityBytes;
    /** What {@link #stopAsync()} proves; completed once. */
    private final CompletableFuture<CampaignEnd> end = new CompletableFuture<>();

    private Observation observation;
    // Guarded by this:
    private boolean stopping;
    private AcquireCall queued;
    private Leadership leading;
    private KeepAlive keepAlive;
    /** A term whose release is under way: its answer ends a stop, or queues again. */
    private Leadership releasing;
    /** The back-off pause before the next attempt, or the end-of-term check while leading. */
    private Scheduler.Timer timer;
    private long backoffNanos;
    private long lastStartedTerm;

    Campaign(Election election, Engine engine, CampaignListener listener) {
        this.election = election;
        this.engine = engine;
        this.listener = listener;
        this.options = election.options();
        this.calls = new SerialExecutor(engine.deliveryExecutor());
        this.tracker = new LeaderTracker(listener, calls);
        this.keyBytes = Arguments.key(election.key());
        this.identityBytes = election.identityBytes();
    }

    /** Observes the key and queues the first acquire; the client's close stops it first. */
    Campaign start() {
        election.enlist(this);
        observation = election.observe(tracker);
        queue();
        return this;
    }

    /** The election this campaign runs in. */
    public Election election() {
        return election;
    }

    /** This candidate's current term, if it leads now. */
    public synchronized java.util.Optional<Leadership> leadership() {
        return java.util.Optional.ofNullable(leading);
    }

    /** True once {@link #stop()} or {@link #close()} began. */
    public synchronized boolean isStopped() {
        return stopping;
    }

    /** Queues an acquire unless stopping; under the monitor or from a timer. */
    private synchronized void queue() {
        timer = null;
        if (stopping) {
            return;
        }
        AcquireCall call;
        try {
            call = engine.acquireMillis(keyBytes, options.campaignWait().toMillis(), options.leaseSeconds(),
                    HoldMode.EXCLUSIVE, identityBytes, g -> new AcquireOutcome.Acquired(new Ticket(engine,
                            election.key(), keyBytes, g.token(), g.validUntil(), g.leaseEndUpperBound())), false);
        } catch (IllegalStateException clientClosed) {
            stopping = true;
            end.complete(new CampaignEnd.Idle());
            return;
        }
        queued = call;
        call.result().whenCompleteAsync((r, e) -> answered(call, e != null
                ? new AcquireOutcome.Indeterminate(String.valueOf(e)) : call.deliver(r)), engine.deliveryExecutor());
    }

    /** An acquire of this campaign ended with {@code o} (after the ticket gate). */
    private void answered(AcquireCall call, AcquireOutcome o) {
        Leadership started = null;
        synchronized (this) {
            if (queued == call) {
                queued = null;
            }
            if (stopping) {
                stoppedWith(o);
                return;
            }
            if (o instanceof AcquireOutcome.Acquired a && a.ticket().token() > lastStartedTerm) {
                started = lead(a.ticket());
            } else if (o instanceof AcquireOutcome.Acquired a) {
                release(a.ticket()); // a term is started at most once (tokens increase: a guard)
                queue();
            } else if (o instanceof AcquireOutcome.TimedOut) {
                backoffNanos = 0;
                queue(); // the wait ended: at once, to the queue's tail (waits end at different times)
            } else {
                backOff();
                calls.execute(() -> listener.onAttemptFailed(o));
            }
        }
        if (started != null) {
            Leadership l = started;
            calls.execute(() -> {
                if (l.isValid()) { // not ended, and delivered before the term's end (else the timer ends it)
                    l.started = true;
                    listener.onStartedLeading(l);
                }
            });
        }
    }

    /** The answer to an acquire that was withdrawn by {@link #stopAsync()}; under the monitor. */
    private void stoppedWith(AcquireOutcome o) {
        if (o instanceof AcquireOutcome.Acquired a) {
            // The gate passed before the withdrawal took: nobody was told of this grant, release it.
            release(a.ticket()).whenComplete((r, e) -> end.complete(new CampaignEnd.Withdrawn(
                    new AcquireOutcome.Cancelled("stopped; the grant came first and its token is released"))));
        } else if (o.isDefinitiveRefusal()) {
            end.complete(new CampaignEnd.Withdrawn(o));
        } else {
            end.complete(new CampaignEnd.Unproven(String.valueOf(o)));
        }
    }

    /** Starts term {@code ticket.token()}: the keep-alive and the end-of-term check; under the monitor. */
    private Leadership lead(Ticket ticket) {
        Leadership l = new Leadership(this, ticket, election.identity(),
                options.safety().toNanos(), engine.ticker());
        lastStartedTerm = ticket.token();
        leading = l;
        backoffNanos = 0;
        keepAlive = election.keepAlive(ticket, (t, reason, detail) -> endTerm(l,
                // CLIENT_CLOSED also names an Extend that failed outright: CLOSED only if the client is
                reason == LossReason.CLIENT_CLOSED && engine.isClosed() ? StopReason.CLOSED : StopReason.LEASE_LOST));
        checkTermAt(l);
        return l;
    }

    /** Arms the end-of-term check at the term's current end; under the monitor. */
    private void checkTermAt(Leadership l) {
        if (leading != l) {
            return;
        }
        timer = engine.schedule(() -> {
            synchronized (this) {
                if (leading != l) {
                    return;
                }
                if (engine.ticker().nanoTime() - l.validUntilNanos() < 0) {
                    checkTermAt(l); // an Extend moved the validity on
                    return;
                }
            }
            endTerm(l, StopReason.LEASE_LOST);
        }, l.validUntilNanos());
    }

    /** After a failed attempt: the next one after a jittered, doubling pause; under the monitor. */
    private void backOff() {
        long min = options.backoffMin().toNanos();
        backoffNanos = backoffNanos == 0 ? min : Math.min(options.backoffMax().toNanos(), backoffNanos * 2);
        long pause = backoffNanos - ThreadLocalRandom.current().nextLong(backoffNanos / 2 + 1);
        timer = engine.schedule(this::queue, engine.ticker().nanoTime() + pause);
        if (timer == null) {
            stopping = true; // the client closed
            end.complete(new CampaignEnd.Idle());
        }
    }

    /**
     * Ends term {@code l} on this side (once): not valid from now on, no more Extends, then (in
     * listener order) {@code onStoppedLeading}, the release, and, unless stopping, the next queued
     * acquire. Never blocks.
     */
    CompletableFuture<ReleaseOutcome> endTerm(Leadership l, StopReason reason) {
        if (!l.end(reason)) {
            return l.released;
        }
        KeepAlive k = null;
        synchronized (this) {
            if (leading == l) {
                leading = null;
                releasing = l;
                k = keepAlive;
                keepAlive = null;
                if (timer != null) {
                    timer.cancel();
                    timer = null;
                }
            }
        }
        if (k != null) {
            k.close();
        }
        calls.execute(() -> {
            if (l.started) {
                listener.onStoppedLeading(l, reason);
            }
            // Released only after the listener heard it: the next term begins when this one has ended here too.
            release(l.ticket()).whenComplete((r, e) -> {
                ReleaseOutcome outcome = e == null ? r : ReleaseOutcome.EXPIRED;
                l.released.complete(outcome);
                synchronized (this) {
                    if (releasing == l) {
                        releasing = null;
                    }
                    if (stopping) {
                        end.complete(new CampaignEnd.Resigned(l.term(), outcome));
                    } else {
                        queue();
                    }
                }
            });
        });
        return l.released;
    }

    /** Releases {@code t}; a closed client cannot, and its grant ends with its lease: EXPIRED. */
    private static CompletableFuture<ReleaseOutcome> release(Ticket t) {
        try {
            return t.releaseAsync();
        } catch (IllegalStateException clientClosed) {
            return CompletableFuture.completedFuture(ReleaseOutcome.EXPIRED);
        }
    }

    /**
     * Stops campaigning without blocking: resigns the term if leading ({@link StopReason#CLOSED}),
     * else withdraws the queued acquire (PROTOCOL.md 9.14), and closes the observation. The future
     * says what its answer proved. Idempotent.
     */
    public CompletableFuture<CampaignEnd> stopAsync() {
        Leadership l;
        AcquireCall q;
        synchronized (this) {
            if (stopping) {
                return end;
            }
            stopping = true;
            l = leading;
            q = queued;
            if (l == null && q == null && releasing == null) {
                if (timer != null) {
                    timer.cancel();
                    timer = null;
                }
                end.complete(new CampaignEnd.Idle());
            }
        }
        if (observation != null) {
            observation.close();
        }
        end.whenComplete((r, e) -> election.discharge(this));
        if (l != null) {
            endTerm(l, StopReason.CLOSED);
        } else if (q != null) {
            q.withdraw("the campaign was stopped");
        }
        return end;
    }

    /**
     * {@link #stopAsync()}, waiting for the proof at most {@link #stopBoundNanos()} (then
     * {@link CampaignEnd.Unproven}).
     *
     * @throws IllegalStateException when called from this campaign's listener: the release waits
     *         for the listener's calls to return, so it could only end Unproven; call
     *         {@link #stopAsync()} there
     */
    public CampaignEnd stop() {
        if (calls.inTask()) {
            throw new IllegalStateException("Campaign.stop() was called from the campaign's own listener, whose"
                    + " release waits for the listener to return; call stopAsync() there");
        }
        CompletableFuture<CampaignEnd> f = stopAsync();
        long bound = stopBoundNanos();
        try {
            return f.get(bound, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return new CampaignEnd.Unproven("no proof within the response grace and the transport deadline");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new CampaignEnd.Unproven("the calling thread was interrupted");
        } catch (ExecutionException e) {
            return new CampaignEnd.Unproven(String.valueOf(e.getCause()));
        }
    }

    /** How long {@link #stop()} waits for its proof: the response grace plus the transport deadline. */
    long stopBoundNanos() {
        return engine.config().responseGraceNanos() + engine.config().transportDeadlineNanos();
    }

    /** {@link #stop()}, for try-with-resources; its outcome is not returned. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "Campaign[key=" + election.key() + ", identity=" + election.identity() + "]";
    }
}
