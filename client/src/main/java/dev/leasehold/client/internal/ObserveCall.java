package dev.leasehold.client.internal;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * One subscription of an observation: an {@code O watch key} (PROTOCOL.md 16.1) offered to any
 * session like any request (so it follows {@code X 8} to the leader, 9.12), with no deadline. Once
 * written it stays registered with its session, which hands it the watch's events, until the
 * subscription ends: a {@code B watch}, the {@code U watch} of a close, or the session's end (an
 * {@code X 8} sends it again to the leader instead: nothing was subscribed). Its result is why it ended; the {@link Watch} then subscribes again (or not, once
 * closed). A 1.3 session cannot carry an {@code O} (9.13): the call ends unsent there.
 */
final class ObserveCall extends Outbound<String> {

    /** Receives what a subscription sees; called on the session's reader thread, never blocks. */
    interface Sink {
        void event(ObserveCall call, Answer.Event event);
    }

    private final long watch;
    private final byte[] key;
    private final Sink sink;

    ObserveCall(Engine engine, long watch, byte[] key, Sink sink) {
        super(engine);
        this.watch = watch;
        this.key = key;
        this.sink = sink;
    }

    /** The watch id, from the engine's owner counter (9.15.1): a {@code B} names one request. */
    long watch() {
        return watch;
    }

    /** The session carrying this subscription, or null while it is not written. */
    synchronized Link link() {
        return state == State.SENT || state == State.WRITING ? session : null;
    }

    @Override
    String tooLate(Link s, long now) {
        return s.maxWaitMillis() < 0 ? "the server speaks revision 1.3, which has no watches" : null;
    }

    @Override
    byte[] encode(long now) {
        return FrameWriter.encode(new Request.Observe(watch, key));
    }

    /** An event of this watch arrived on {@code s}. */
    void event(Link s, Answer.Event e) {
        synchronized (this) {
            if (!onWire(s)) {
                return;
            }
        }
        sink.event(this, e);
    }

    /** {@code B watch}: nothing was subscribed (16.6). */
    void busy(Link s) {
        decide(() -> session == s ? "the server is busy (B to the O)" : null);
    }

    /** {@code U watch}: the watch's last frame. */
    void unobserved(Link s) {
        decide(() -> session == s ? "unobserved" : null);
    }

    @Override
    void lost(Link s, String reason) {
        decide(() -> onWire(s) ? reason : null);
    }

    /**
     * A follower's {@code X 8}: nothing was subscribed, and the pool now points at the leader it
     * named (9.12). Sent again there, as an acquire is: the observation was not interrupted, so the
     * listener hears nothing of it.
     */
    @Override
    void notExecuted(Link s, String reason) {
        boolean resend;
        synchronized (this) {
            resend = onWire(s) && state != State.DONE;
            if (resend) {
                state = State.QUEUED;
                session = null;
            }
        }
        if (resend) {
            engine.dispatcher().submit(this);
        }
    }

    /** The pool gave up on sending it (fail-fast), or the client closed. */
    @Override
    void abandon(String reason) {
        decide(() -> reason);
    }
}
