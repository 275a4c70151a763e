package dev.leasehold.client.internal;

import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A request on its way to the server, as its session's writer and reader see it, with its
 * result {@code R}.
 *
 * <p>Every state change of a request happens under the request's own monitor; a request may
 * take its session's lock while holding its own, never the other way round, and no lock is
 * held while a future is completed or a session is closed. The usual shape, "decide under the
 * monitor, act outside it", is {@link #decide}.
 *
 * <p>States: {@code QUEUED} (definitely not sent: in a queue, or its session never came up),
 * {@code WRITING} (possibly sent: a write of its bytes was about to start or has started),
 * {@code SENT} (every byte handed to the socket), {@code DONE} (it has its result).
 *
 * <p>Timers: a request has at most two pending at once, both cancelled when it gets its result:
 * the <i>call</i> timer (its deadline, the response grace, or the give-up instant) and the
 * <i>attempt</i> timer (the answer of the current write is overdue, or the back-off before the
 * next attempt). Arming either replaces the one before it.
 */
abstract class Outbound<R> {

    enum State { QUEUED, WRITING, SENT, DONE }

    /** {@link #beginWrite} result: nothing to write (the request has finished or ran out of time). */
    static final byte[] SKIP = new byte[0];

    /** {@link #beginWrite} result: the session closed first, so the request was not sent. */
    static final byte[] NOT_SENT = new byte[0];

    protected final Engine engine;

    protected final CompletableFuture<R> result = new CompletableFuture<>();

    /** Guarded by {@code this}. */
    protected State state = State.QUEUED;

    /** The session of the current write attempt; guarded by {@code this}. */
    protected Link session;

    /** Ticker time just before the current attempt's first byte was written; guarded by {@code this}. */
    protected long sendStart;

    /** Guarded by {@code this}. */
    private Scheduler.Timer callTimer;

    /** Guarded by {@code this}. */
    private Scheduler.Timer attemptTimer;

    Outbound(Engine engine) {
        this.engine = engine;
    }

    /** Completes once the request is decided, on the thread that decided it. */
    public final CompletableFuture<R> result() {
        return result;
    }

    /**
     * Arms the call timer: {@code task} at {@code atNanos}, replacing the call timer before it.
     * False when the client is closed (nothing was scheduled).
     */
    final boolean armCallTimer(Runnable task, long atNanos) {
        return arm(task, atNanos, true, () -> true);
    }

    /**
     * Arms the attempt timer: {@code task} at {@code atNanos}, replacing the attempt timer before
     * it, if {@code stillWanted} holds (checked under the monitor when the timer is installed:
     * the writer and the reader may arm for the same attempt concurrently, and the later install
     * must not replace the timer of a newer state, e.g. an overdue check installed after the
     * session broke must not cancel the retry). False when the client is closed (nothing was
     * scheduled).
     */
    final boolean armAttemptTimer(Runnable task, long atNanos, BooleanSupplier stillWanted) {
        return arm(task, atNanos, false, stillWanted);
    }

    /** Schedules first, then keeps the timer unless the request finished (or moved on) meanwhile. */
    private boolean arm(Runnable task, long atNanos, boolean call, BooleanSupplier stillWanted) {
        Scheduler.Timer t = engine.schedule(task, atNanos);
        if (t == null) {
            return false;
        }
        Scheduler.Timer old;
        synchronized (this) {
            if (state == State.DONE || !stillWanted.getAsBoolean()) {
                old = t;
            } else if (call) {
                old = callTimer;
                callTimer = t;
            } else {
                old = attemptTimer;
                attemptTimer = t;
            }
        }
        if (old != null) {
            old.cancel();
        }
        return true;
    }

    /**
     * Runs {@code decision} under this request's monitor; if it returns a result the request is
     * DONE, and then (outside the monitor) its timers are cancelled and its future completed.
     * Returns whether this call decided the request.
     */
    final boolean decide(Supplier<R> decision) {
        R r;
        synchronized (this) {
            if (state == State.DONE) {
                return false;
            }
            r = decision.get();
            if (r == null) {
                return false;
            }
            state = State.DONE;
        }
        finish(r);
        return true;
    }

    /** Ends the request with a failure instead of a result (the client closed under it). */
    final void fail(Throwable e) {
        fail(e, false);
    }

    /** Like {@link #fail(Throwable)}, only if the request is still definitely not sent (or unless {@code queuedOnly}). */
    final void fail(Throwable e, boolean queuedOnly) {
        synchronized (this) {
            if (state == State.DONE || (queuedOnly && state != State.QUEUED)) {
                return;
            }
            state = State.DONE;
        }
        cancelTimers();
        result.completeExceptionally(e);
    }

    private void finish(R r) {
        cancelTimers();
        result.complete(r);
    }

    private void cancelTimers() {
        Scheduler.Timer a;
        Scheduler.Timer b;
        synchronized (this) {
            a = callTimer;
            b = attemptTimer;
            callTimer = null;
            attemptTimer = null;
        }
        if (a != null) {
            a.cancel();
        }
        if (b != null) {
            b.cancel();
        }
    }

    /**
     * Called by the writer of {@code s} just before its bytes are handed to the socket, with the
     * time read then: checks the time left, registers the request with {@code s} for its answer,
     * marks it possibly sent and encodes it. Returns the frame, {@link #SKIP} or {@link #NOT_SENT}.
     */
    final byte[] beginWrite(Link s, long now) {
        R expired;
        RuntimeException refused;
        synchronized (this) {
            if (state != State.QUEUED) {
                return SKIP;
            }
            refused = refusal(s);
            expired = refused == null ? tooLate(s, now) : null;
            if (refused == null && expired == null) {
                if (!s.register(this)) {
                    return NOT_SENT;
                }
                state = State.WRITING;
                session = s;
                sendStart = now;
                return encode(now);
            }
            state = State.DONE;
        }
        if (refused != null) {
            cancelTimers();
            result.completeExceptionally(refused);
        } else {
            finish(expired);
        }
        return SKIP;
    }

    /**
     * Under the monitor, at write time on {@code s}: why this request may not be written there at
     * all (the call then fails with it), or null. By default null.
     */
    RuntimeException refusal(Link s) {
        return null;
    }

    /** Under the monitor, at write time on {@code s}: the result if it is too late (or not possible) to write there, else null. */
    abstract R tooLate(Link s, long now);

    /** Under the monitor, once registered: the frame of this attempt. */
    abstract byte[] encode(long now);

    /** Every byte was handed to the socket of {@code s}. */
    final void written(Link s) {
        synchronized (this) {
            if (state != State.WRITING || session != s) {
                return;
            }
            state = State.SENT;
        }
        afterWritten(s);
    }

    /** Hook run (without the lock) after a request moved to SENT. */
    void afterWritten(Link s) {
    }

    /** The session {@code s} ended (or never came up) before it wrote this request: try elsewhere. */
    final void notSent(Link s) {
        synchronized (this) {
            if (state != State.QUEUED) {
                return;
            }
        }
        if (!resendable()) {
            abandon("its session closed before it was written");
            return;
        }
        engine.dispatcher().submit(this);
    }

    /** Whether a request its session did not write may go to another session (all but a Withdraw). */
    boolean resendable() {
        return true;
    }

    /** The session {@code s} broke after this request was possibly sent, before its answer. */
    abstract void lost(Link s, String reason);

    /**
     * A cluster follower answered {@code X 8} on {@code s}: none of that session's requests was
     * executed (PROTOCOL.md 9.12). By default the same as {@link #lost} (Release and Extend are
     * retried anyway); an Acquire is sent again, with the same owner and deadline, while
     * its deadline has not passed.
     */
    void notExecuted(Link s, String reason) {
        lost(s, reason);
    }

    /**
     * The server answered {@code X 7} on {@code s} naming this request's key: it refused the key
     * before executing anything of it (PROTOCOL.md section 4). By default the same as
     * {@link #lost}; an Acquire ends as Forbidden.
     */
    void forbidden(Link s, String reason) {
        lost(s, reason);
    }

    /** This request's key, where an {@code X 7} may name it (an Acquire's); null otherwise. */
    byte[] key() {
        return null;
    }

    /** The client is closing (or the pool refused it) while the request was not sent. */
    abstract void abandon(String reason);

    final synchronized boolean isDone() {
        return state == State.DONE;
    }

    /** True if this request is written or being written on {@code s} and still unanswered (under the monitor). */
    final boolean onWire(Link s) {
        return (state == State.WRITING || state == State.SENT) && session == s;
    }
}
