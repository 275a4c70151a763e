package dev.leasehold.client.internal;

import dev.leasehold.client.CheckOutcome;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * A Release, an Extend or a Check of one exact token, ending with the public
 * {@link ReleaseOutcome}, {@link ExtendOutcome} or {@link CheckOutcome}. All name the token, so
 * unlike an Acquire they are safe to repeat (a Check changes nothing at all): after
 * a failure the call is offered again to any session, until the lease would have ended anyway
 * ({@code giveUpAt}, 9.10). An attempt whose answer does not come within the response grace
 * after its write gives its session up (it is closed) and is retried. Both the overdue check
 * and the back-off are the request's attempt timer, cancelled when the call ends.
 */
public final class TokenCall<R> extends Outbound<R> {

    private static final long FIRST_BACKOFF = 25_000_000L;
    private static final long MAX_BACKOFF = 1_000_000_000L;

    /** The public words for the ways a token call ends. */
    private interface Outcomes<R> {
        R released();

        default R current() {
            throw new IllegalStateException("a C answered a Release or an Extend");
        }

        R extended(long validUntil);

        R notHeld();

        R expired();
    }

    private static final Outcomes<ReleaseOutcome> RELEASE = new Outcomes<>() {
        public ReleaseOutcome released() {
            return ReleaseOutcome.RELEASED;
        }

        public ReleaseOutcome extended(long validUntil) {
            throw new IllegalStateException("an E answered a Release");
        }

        public ReleaseOutcome notHeld() {
            return ReleaseOutcome.NOT_HELD;
        }

        public ReleaseOutcome expired() {
            return ReleaseOutcome.EXPIRED;
        }
    };

    private static final Outcomes<ExtendOutcome> EXTEND = new Outcomes<>() {
        public ExtendOutcome released() {
            throw new IllegalStateException("an R answered an Extend");
        }

        public ExtendOutcome extended(long validUntil) {
            return new ExtendOutcome.Extended(validUntil);
        }

        public ExtendOutcome notHeld() {
            return new ExtendOutcome.NotHeld();
        }

        public ExtendOutcome expired() {
            return new ExtendOutcome.Expired();
        }
    };

    private static final Outcomes<CheckOutcome> CHECK = new Outcomes<>() {
        public CheckOutcome released() {
            throw new IllegalStateException("an R answered a Check");
        }

        public CheckOutcome current() {
            return new CheckOutcome.Current();
        }

        public CheckOutcome extended(long validUntil) {
            throw new IllegalStateException("an E answered a Check");
        }

        public CheckOutcome notHeld() {
            return new CheckOutcome.NotCurrent();
        }

        public CheckOutcome expired() {
            return new CheckOutcome.Indeterminate("no answer before the check's deadline");
        }
    };

    private final byte[] key;
    private final long token;
    /** True for a Check (then {@link #leaseSeconds} is 0). */
    private final boolean check;
    /** 0 for a Release or a Check, else the Extend's lease in seconds. */
    private final int leaseSeconds;
    private final long giveUpAt;
    private final Outcomes<R> outcomes;

    /** Write attempts made so far; guarded by {@code this}. */
    private int attempts;

    /**
     * For an Extend: a bound on the lease end should a lost attempt have been applied; guarded
     * by {@code this}. Meaningful once {@code uncertain} is set.
     */
    private long uncertainLeaseEnd;
    private boolean uncertain;

    /** For an answered Extend: the instant by which the extended lease has certainly ended. */
    private long confirmedLeaseEnd;

    private TokenCall(Engine engine, byte[] key, long token, int leaseSeconds, long giveUpAt, Outcomes<R> outcomes) {
        super(engine);
        this.key = key;
        this.token = token;
        this.check = outcomes == CHECK;
        this.leaseSeconds = leaseSeconds;
        this.giveUpAt = giveUpAt;
        this.outcomes = outcomes;
    }

    static TokenCall<ReleaseOutcome> release(Engine engine, byte[] key, long token, long giveUpAt) {
        return new TokenCall<>(engine, key, token, 0, giveUpAt, RELEASE);
    }

    static TokenCall<ExtendOutcome> extend(Engine engine, byte[] key, long token, int leaseSeconds, long giveUpAt) {
        return new TokenCall<>(engine, key, token, leaseSeconds, giveUpAt, EXTEND);
    }

    static TokenCall<CheckOutcome> check(Engine engine, byte[] key, long token, long giveUpAt) {
        return new TokenCall<>(engine, key, token, 0, giveUpAt, CHECK);
    }

    void start() {
        armCallTimer(this::giveUp, giveUpAt);
    }

    /** The exact token this call names. */
    public long token() {
        return token;
    }

    /**
     * For an Extend that ended without an {@code E} after an attempt was possibly applied: the
     * instant by which that possible extension has certainly ended; otherwise {@code null}.
     */
    public synchronized Long uncertainLeaseEnd() {
        return uncertain ? uncertainLeaseEnd : null;
    }

    /** For an Extend answered {@code E}: the instant by which the extended lease has certainly ended. */
    public synchronized long confirmedLeaseEnd() {
        return confirmedLeaseEnd;
    }

    @Override
    R tooLate(Link s, long now) {
        return now - giveUpAt >= 0 ? outcomes.expired() : null;
    }

    @Override
    byte[] encode(long now) {
        attempts++;
        return FrameWriter.encode(check ? new Request.Check(token, key)
                : leaseSeconds > 0 ? new Request.Extend(leaseSeconds, token, key) : new Request.Release(token, key));
    }

    @Override
    void afterWritten(Link s) {
        armAttemptTimer(() -> answerOverdue(s), engine.ticker().nanoTime() + engine.config().responseGraceNanos(),
                () -> state == State.SENT && session == s);
    }

    private void answerOverdue(Link s) {
        boolean overdue;
        synchronized (this) {
            overdue = state == State.SENT && session == s;
        }
        if (overdue) {
            // Releases and Extends are answered at once; a session that sits on one is unusable.
            s.close("a " + (check ? "Check" : leaseSeconds > 0 ? "Extend" : "Release") + " got no answer within the response grace");
        }
    }

    /** A correlated {@code R}, {@code E}, {@code C} or {@code N} arrived on {@code s}. */
    void answer(Answer a, Link s, long receivedAt) {
        decide(() -> {
            if (session != s) {
                return null; // an abandoned attempt's answer: it only had to leave the session's queue
            }
            return switch (a.type()) {
                case RELEASED -> outcomes.released();
                case CURRENT -> outcomes.current();
                case EXTENDED -> extended(receivedAt);
                case NOT_HELD -> outcomes.notHeld();
                case ACQUIRED, TIMED_OUT, BUSY, LIMIT_MISMATCH, PONG, HELLO, VALUE_SET, ERROR, EVENT, UNOBSERVED ->
                        throw new IllegalArgumentException("not an answer to a Release, Extend or Check: " + a);
            };
        });
    }

    /** The outcome of an {@code E}, which confirms the lease end keep-alive plans from; under the monitor. */
    private R extended(long receivedAt) {
        Config c = engine.config();
        confirmedLeaseEnd = LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(),
                c.driftRate());
        return outcomes.extended(LeaseMath.validUntil(sendStart, 0, leaseSeconds, c.marginFloorNanos(), c.driftRate()));
    }

    @Override
    void lost(Link s, String reason) {
        int attempt;
        long now = engine.ticker().nanoTime();
        synchronized (this) {
            if (!onWire(s)) {
                return;
            }
            state = State.QUEUED;
            session = null;
            attempt = attempts;
            if (leaseSeconds > 0) {
                Config c = engine.config();
                // The server may still read the request from its buffer shortly after the break.
                long bound = LeaseMath.leaseEndUpperBound(now + c.responseGraceNanos(), leaseSeconds,
                        c.marginFloorNanos(), c.driftRate());
                uncertainLeaseEnd = uncertain ? LeaseMath.latest(uncertainLeaseEnd, bound) : bound;
                uncertain = true;
            }
        }
        if (!armAttemptTimer(this::retry, now + backoff(attempt), () -> state == State.QUEUED)) {
            abandon("the client is closed");
        }
    }

    /** Pause before attempt {@code n + 1}: 25 ms doubling, at most 1 s. */
    static long backoff(int attemptsMade) {
        return Math.min(MAX_BACKOFF, FIRST_BACKOFF << Math.min(attemptsMade, 10));
    }

    private void retry() {
        if (!isDone()) {
            engine.dispatcher().submit(this);
        }
    }

    @Override
    void abandon(String reason) {
        fail(new IllegalStateException(reason), true);
    }

    private void giveUp() {
        decide(outcomes::expired);
    }
}
