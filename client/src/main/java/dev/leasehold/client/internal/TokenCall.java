package dev.leasehold.client.internal;

import java.util.concurrent.CompletableFuture;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * A Release or an Extend of one exact token. Both name the token, so unlike an Acquire they are
 * safe to repeat: after a failure the call is offered again to any session, until the lease
 * would have ended anyway ({@code giveUpAt}, 9.10). An attempt whose answer does not come within
 * the response grace after its write gives its session up (it is closed) and is retried.
 */
public final class TokenCall extends Outbound {

    private static final long MAX_BACKOFF = 1_000_000_000L;

    private final byte[] key;
    private final long token;
    /** 0 for a Release, else the Extend's lease in seconds. */
    private final int leaseSeconds;
    private final long giveUpAt;
    private final CompletableFuture<TokenResult> result = new CompletableFuture<>();

    /** Guarded by {@code this}. */
    private int attempts;
    /** Guarded by {@code this}. */
    /**
     * For an Extend: a bound on the lease end should a lost attempt have been applied; guarded
     * by {@code this}.
     */
    private long uncertainLeaseEnd;
    private boolean uncertain;

    TokenCall(Engine engine, byte[] key, long token, int leaseSeconds, long giveUpAt) {
        super(engine);
        this.key = key;
        this.token = token;
        this.leaseSeconds = leaseSeconds;
        this.giveUpAt = giveUpAt;
    }

    void start() {
        armTimer(this::giveUp, giveUpAt);
    }

    /** The exact token this call names. */
    public long token() {
        return token;
    }

    /** True for an Extend. */
    public boolean isExtend() {
        return leaseSeconds > 0;
    }

    /** Write attempts made so far. */
    public synchronized int attempts() {
        return attempts;
    }

    /**
     * For an Extend that ended without an {@code E} after an attempt was possibly applied: the
     * instant by which that possible extension has certainly ended; otherwise {@code null}.
     */
    public synchronized Long uncertainLeaseEnd() {
        return uncertain ? uncertainLeaseEnd : null;
    }

    /** Completes (on an internal thread) once the call is decided. */
    public CompletableFuture<TokenResult> result() {
        return result;
    }

    @Override
    byte[] beginWrite(Session s, long now) {
        boolean expired = false;
        byte[] frame;
        synchronized (this) {
            if (state != State.QUEUED) {
                return SKIP;
            }
            if (now - giveUpAt >= 0) {
                state = State.DONE;
                expired = true;
                frame = SKIP;
            } else if (!s.register(this)) {
                return NOT_SENT;
            } else {
                state = State.WRITING;
                session = s;
                sendStart = now;
                attempts++;
                frame = FrameWriter.encode(leaseSeconds > 0 ? new Request.Extend(leaseSeconds, token, key)
                        : new Request.Release(token, key));
            }
        }
        if (expired) {
            finish(new TokenResult.Expired());
        }
        return frame;
    }

    @Override
    void afterWritten(Session s) {
        int attempt;
        synchronized (this) {
            attempt = attempts;
        }
        engine.schedule(() -> answerOverdue(s, attempt), System.nanoTime() + engine.config().responseGraceNanos());
    }

    private void answerOverdue(Session s, int attempt) {
        boolean overdue;
        synchronized (this) {
            overdue = state == State.SENT && session == s && attempts == attempt;
        }
        if (overdue) {
            // Releases and Extends are answered at once; a session that sits on one is unusable.
            s.close("a " + (leaseSeconds > 0 ? "Extend" : "Release") + " got no answer within the response grace");
        }
    }

    /** A correlated {@code R}, {@code E} or {@code N} arrived on {@code s}. */
    void answer(Answer a, Session s, long receivedAt) {
        TokenResult done;
        synchronized (this) {
            if (state == State.DONE || session != s) {
                return; // an abandoned attempt's answer: it only had to leave the session's queue
            }
            state = State.DONE;
            if (a instanceof Answer.Released) {
                done = new TokenResult.Released();
            } else if (a instanceof Answer.Extended) {
                Config c = engine.config();
                done = new TokenResult.Extended(
                        LeaseMath.validUntil(sendStart, 0, leaseSeconds, c.marginFloorNanos(), c.driftRate()),
                        LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(), c.driftRate()));
            } else {
                done = new TokenResult.NotHeld();
            }
        }
        finish(done);
    }

    @Override
    void lost(Session s, String reason) {
        int attempt;
        synchronized (this) {
            if (!((state == State.WRITING || state == State.SENT) && session == s)) {
                return;
            }
            state = State.QUEUED;
            session = null;
            attempt = attempts;
            if (leaseSeconds > 0) {
                Config c = engine.config();
                // The server may still read the request from its buffer shortly after the break.
                long bound = LeaseMath.leaseEndUpperBound(System.nanoTime() + c.responseGraceNanos(), leaseSeconds,
                        c.marginFloorNanos(), c.driftRate());
                uncertainLeaseEnd = uncertain ? LeaseMath.latest(uncertainLeaseEnd, bound) : bound;
                uncertain = true;
            }
        }
        long backoff = Math.min(MAX_BACKOFF, 25_000_000L << Math.min(attempt, 10));
        if (engine.schedule(() -> {
            if (!isDone()) {
                engine.pool().submit(this);
            }
        }, System.nanoTime() + backoff) == null) {
            abandon("the client is closed");
        }
    }

    @Override
    void abandon(String reason) {
        boolean done = false;
        synchronized (this) {
            if (state == State.QUEUED) {
                state = State.DONE;
                done = true;
            }
        }
        if (done) {
            cancelTimer();
            result.completeExceptionally(new IllegalStateException(reason));
        }
    }

    private void giveUp() {
        synchronized (this) {
            if (state == State.DONE) {
                return;
            }
            state = State.DONE;
        }
        finish(new TokenResult.Expired());
    }

    private void finish(TokenResult r) {
        cancelTimer();
        result.complete(r);
    }
}
