package dev.leasehold.client.internal;

import java.util.concurrent.ScheduledFuture;

/**
 * A request on its way to the server, as its session's writer and reader see it.
 *
 * <p>Every state change of a request happens under the request's own monitor; a request may
 * take its session's lock while holding its own, never the other way round, and no lock is
 * held while a future is completed or a session is closed.
 *
 * <p>States: {@code QUEUED} (definitely not sent: in a queue, or its session never came up),
 * {@code WRITING} (possibly sent: a write of its bytes was about to start or has started),
 * {@code SENT} (every byte handed to the socket), {@code DONE} (it has its result).
 */
abstract class Outbound {

    enum State { QUEUED, WRITING, SENT, DONE }

    /** {@link #beginWrite} result: nothing to write (the request has finished or ran out of time). */
    static final byte[] SKIP = new byte[0];

    /** {@link #beginWrite} result: the session closed first, so the request was not sent. */
    static final byte[] NOT_SENT = new byte[0];

    protected final Engine engine;

    /** Guarded by {@code this}. */
    protected State state = State.QUEUED;

    /** The session of the current write attempt; guarded by {@code this}. */
    protected Session session;

    /** nanoTime just before the current attempt's first byte was written; guarded by {@code this}. */
    protected long sendStart;

    /** The one pending timer of this request (deadline, grace or give-up); guarded by {@code this}. */
    private ScheduledFuture<?> timer;

    Outbound(Engine engine) {
        this.engine = engine;
    }

    /**
     * Schedules {@code task} at {@code atNanos} as this request's timer (the one before it has
     * fired), unless the request finished meanwhile: then the new timer is cancelled at once.
     */
    final void armTimer(Runnable task, long atNanos) {
        ScheduledFuture<?> t = engine.schedule(task, atNanos);
        synchronized (this) {
            if (state != State.DONE) {
                timer = t;
                return;
            }
        }
        if (t != null) {
            t.cancel(false);
        }
    }

    /** Cancels the pending timer, if any (called when the request gets its result). */
    final void cancelTimer() {
        ScheduledFuture<?> t;
        synchronized (this) {
            t = timer;
            timer = null;
        }
        if (t != null) {
            t.cancel(false);
        }
    }

    /**
     * Called by the writer of {@code s} just before its bytes are handed to the socket: checks the
     * time left, registers the request for its answer with {@code s}, marks it possibly sent and
     * encodes it. Returns the frame, {@link #SKIP} or {@link #NOT_SENT}.
     */
    abstract byte[] beginWrite(Session s, long now);

    /** Every byte was handed to the socket of {@code s}. */
    final void written(Session s) {
        synchronized (this) {
            if (state != State.WRITING || session != s) {
                return;
            }
            state = State.SENT;
        }
        afterWritten(s);
    }

    /** Hook run (without the lock) after a request moved to SENT. */
    void afterWritten(Session s) {
    }

    /** The session {@code s} ended (or never came up) before it wrote this request: try elsewhere. */
    final void notSent(Session s) {
        synchronized (this) {
            if (state != State.QUEUED) {
                return;
            }
        }
        engine.pool().submit(this);
    }

    /** The session {@code s} broke after this request was possibly sent, before its answer. */
    abstract void lost(Session s, String reason);

    /**
     * A cluster follower answered {@code X 8} on {@code s}: none of that session's requests was
     * executed (PROTOCOL.md 9.12). By default the same as {@link #lost} (Release and Extend are
     * retried anyway); an Acquire may be sent once more, with the same owner and deadline.
     */
    void notExecuted(Session s, String reason) {
        lost(s, reason);
    }

    /** The client is closing (or the pool refused it) while the request was not sent. */
    abstract void abandon(String reason);

    final synchronized boolean isDone() {
        return state == State.DONE;
    }

    /** True if this request is written or being written on {@code s} and still unanswered. */
    final synchronized boolean inFlightOn(Session s) {
        return (state == State.WRITING || state == State.SENT) && session == s;
    }
}
