package dev.leasehold.client.internal;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;

/**
 * One {@code acquire} call: one owner and one deadline {@code D} for its whole life, however many
 * sessions it is offered to while it is definitely not sent (9.2 to 9.9). It ends with one of
 * the public {@link AcquireOutcome}s; a grant becomes the caller's ticket through the
 * {@link Tickets} the public layer passes in, and must still pass {@link #deliver the gate}.
 *
 * <p>Its result future is completed on the thread that decided it (a session reader, the timer,
 * a writer); callers must not attach synchronous dependents that could block.
 */
public final class AcquireCall extends Outbound<AcquireOutcome> {

    /**
     * A correlated {@code A}: {@code validUntil} is the safe local end of the lease (9.6) and
     * {@code leaseEndUpperBound} the instant by which it has certainly ended (ticker time).
     */
    public record Grant(long token, long queuedMs, long validUntil, long leaseEndUpperBound) {
    }

    /** Turns a grant into the caller's outcome (a ticket); supplied by the public layer. */
    @FunctionalInterface
    public interface Tickets {
        AcquireOutcome.Acquired ticket(Grant grant);
    }

    private final byte[] key;
    /** The caller's wait in milliseconds (0: one immediate attempt); whole seconds on the 1.3 path. */
    private final long waitMillis;
    private final int leaseSeconds;
    /** How the grant would hold the key: {@code A} for exclusive, else {@code S} (PROTOCOL.md section 13). */
    private final HoldMode mode;
    private final long owner;
    /** The grant's value (PROTOCOL.md 17.2), sent in the {@code M}; empty for none. */
    private final byte[] value;
    private final long deadline;
    private final Tickets tickets;

    /** The grant this call was answered with, if any; guarded by {@code this}. */
    private Grant grant;

    /** A correlated answer arrived (also after the call was decided, e.g. to a Withdraw). */
    private volatile boolean answered;

    /** {@link #withdraw(String)} sent a {@code W}: the answer decides Cancelled (9.14); guarded by {@code this}. */
    private boolean withdrawing;

    /** Times sent again after an {@code X 8} (9.12); guarded by {@code this}. */
    private int notLeaderResends;

    AcquireCall(Engine engine, byte[] key, int waitSeconds, int leaseSeconds, long owner, long start, Tickets tickets) {
        this(engine, key, waitSeconds * 1000L, leaseSeconds, HoldMode.EXCLUSIVE, NO_VALUE, owner, start, tickets);
    }

    /**
     * @param waitMillis the caller's wait, 0 to 3600 s in milliseconds (PROTOCOL.md 9.13)
     * @param mode exclusive ({@code A}), or read or permits ({@code S}); on a 1.4 session an {@code M}
     * @param value an exclusive grant's value (9.16.1), checked by the caller to be at most 1024
     *        bytes; empty for none
     */
    AcquireCall(Engine engine, byte[] key, long waitMillis, int leaseSeconds, HoldMode mode, byte[] value, long owner,
            long start, Tickets tickets) {
        super(engine);
        if (value.length > 0 && mode.isShared()) {
            throw new IllegalArgumentException("values are for exclusive grants only (PROTOCOL.md 17.2)");
        }
        this.value = value;
        this.mode = mode;
        this.key = key;
        this.waitMillis = waitMillis;
        this.leaseSeconds = leaseSeconds;
        this.owner = owner;
        this.tickets = tickets;
        this.deadline = start + (waitMillis == 0 ? engine.config().transportDeadlineNanos()
                : waitMillis * LeaseMath.MILLI);
    }

    /** No value. */
    static final byte[] NO_VALUE = new byte[0];

    /** Arms the deadline timer; called once, before the first submit. */
    void start() {
        armCallTimer(this::onDeadline, deadline);
    }

    /** The correlation id of this call, the same on every attempt. */
    public long owner() {
        return owner;
    }

    /** The call's single monotonic deadline {@code D}. */
    public long deadline() {
        return deadline;
    }

    /**
     * Not sent, Unavailable: {@code D} has passed, the value is longer than the session takes (its
     * {@code max_value_bytes}; none on a 1.3 session: 9.16.1), or the wire wait would pass what the
     * session takes (its {@code max_wait_ms}, 255 s on a 1.3 session): 9.13 never cuts a wait short.
     */
    @Override
    AcquireOutcome tooLate(Link s, long now) {
        if (now - deadline >= 0) {
            return new AcquireOutcome.Unavailable("the deadline passed before the request could be written");
        }
        if (value.length > 0 && value.length > s.maxValueBytes()) {
            // 9.13 and 9.16.1: an X 1 or X 3 would close a session that carries other calls' requests.
            return new AcquireOutcome.Unavailable(s.maxValueBytes() < 0
                    ? "a value cannot be sent to a revision 1.3 server (PROTOCOL.md 9.16.1); it is not sent"
                    : "the value of " + value.length + " bytes is longer than the server's max-value-bytes of "
                            + s.maxValueBytes() + " (leasehold.max-value-bytes); it is not sent");
        }
        if (waitMillis == 0) {
            return null;
        }
        long max = s.maxWaitMillis();
        if (max >= 0 && LeaseMath.wireWaitMillis(deadline, now) > max) {
            return new AcquireOutcome.Unavailable("the wait of " + waitMillis + " ms is longer than the server's max-wait"
                    + " of " + max + " ms (leasehold.max-wait); it is not sent, nor cut short");
        }
        if (max < 0 && LeaseMath.wireWaitUncapped(deadline, now) > Wire.MAX_SECONDS) {
            return new AcquireOutcome.Unavailable("the wait of " + waitMillis + " ms is longer than the "
                    + Wire.MAX_SECONDS + " s a revision 1.3 server takes; it is not sent, nor cut short");
        }
        return null;
    }

    /**
     * 9.3, 9.5 and 9.13: wait 0 is always sent as 0; on a 1.4 session an {@code M} with
     * {@code ceil((D - now) / 1 ms)}; on a 1.3 session an {@code A} or {@code S} with
     * {@code ceil((D - now) / 1 s)}. Called after {@link #tooLate}, with {@code session} set.
     */
    @Override
    byte[] encode(long now) {
        if (session.maxWaitMillis() >= 0) {
            long wire = waitMillis == 0 ? 0 : LeaseMath.wireWaitMillis(deadline, now);
            return FrameWriter.encode(mode.isShared()
                    ? Request.MilliAcquire.shared(wire, leaseSeconds, owner, mode.limit(), key)
                    : new Request.MilliAcquire(0, wire, leaseSeconds, owner, 0, value, key));
        }
        int wire = waitMillis == 0 ? 0 : LeaseMath.wireWait(deadline, now);
        return FrameWriter.encode(mode.isShared()
                ? new Request.SharedAcquire(wire, leaseSeconds, owner, mode.limit(), key)
                : new Request.Acquire(wire, leaseSeconds, owner, key));
    }

    /** A correlated {@code A}, {@code T} or {@code B} arrived on {@code s} at {@code receivedAt}. */
    void answer(Answer a, Link s, long receivedAt) {
        answered = true;
        Config c = engine.config();
        long[] release = new long[1];
        boolean decided = decide(() -> {
            if (session != s) {
                return null;
            }
            if (withdrawing && (a.type() == AnswerType.ACQUIRED || a.type() == AnswerType.TIMED_OUT)) {
                return withdrawn(a, receivedAt, release);
            }
            return switch (a.type()) {
                case ACQUIRED -> granted((Answer.Acquired) a, receivedAt);
                case TIMED_OUT -> new AcquireOutcome.TimedOut();
                case BUSY -> new AcquireOutcome.Busy();
                // Definitive, like B (PROTOCOL.md 13.1): names both limits, never Indeterminate.
                case LIMIT_MISMATCH -> new AcquireOutcome.LimitMismatch(mode.isShared() ? mode.limit() : 0,
                        ((Answer.LimitMismatch) a).limit());
                case RELEASED, EXTENDED, NOT_HELD, CURRENT, PONG, HELLO, VALUE_SET, ERROR, EVENT, UNOBSERVED ->
                        throw new IllegalArgumentException("not an answer to an Acquire: " + a);
            };
        });
        if (decided && release[0] != 0) {
            // The grant came before the withdrawal: the caller holds nothing, its token is released.
            engine.compensate(key, ((Answer.Acquired) a).token(), release[0]);
        }
        if (!decided && a instanceof Answer.Acquired g) {
            // Decided already (Indeterminate) but the server granted: free that exact grant.
            engine.compensate(key, g.token(),
                    LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(), c.driftRate()));
        }
    }

    /**
     * The answer to a withdrawn acquire (9.14.3), under the monitor: {@code T} proves no grant; an
     * {@code A} is a grant that came first, never delivered: its lease end goes to {@code release}
     * for the compensating release. Both are Cancelled.
     */
    private AcquireOutcome withdrawn(Answer a, long receivedAt, long[] release) {
        if (a instanceof Answer.Acquired) {
            Config c = engine.config();
            release[0] = LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(), c.driftRate());
            return new AcquireOutcome.Cancelled("withdrawn; the grant came first and its token is released");
        }
        return new AcquireOutcome.Cancelled("withdrawn: the server took the acquire out of the queue");
    }

    /**
     * 9.14.4 for a call that reports a definitive end (a stopped campaign or adapter): withdraws
     * this acquire and lets its own answer decide. Not yet written: Unavailable at once. Written
     * whole or being written on a 1.4 session: {@code W} on that session (behind its bytes), then {@link AcquireOutcome.Cancelled} on
     * {@code T}, on an {@code A} (whose token is released) or on {@code X 8}; Busy or the limit
     * mismatch on {@code B} or {@code L}; Indeterminate if the session breaks or no answer comes
     * within the response grace. On a 1.3 session (no {@code W}): Indeterminate at once, as
     * {@link #conclude}.
     */
    public void withdraw(String reason) {
        Link[] on = new Link[1];
        decide(() -> {
            if (state == State.QUEUED) {
                return new AcquireOutcome.Unavailable(reason);
            }
            if (waitMillis > 0 && session.maxWaitMillis() >= 0) { // SENT or WRITING: 9.14.2
                withdrawing = true;
                on[0] = session;
                return null;
            }
            return new AcquireOutcome.Indeterminate(reason);
        });
        if (on[0] != null) {
            withdraw(on[0]);
        }
    }

    /** The ticket for an {@code A}; under the monitor. */
    private AcquireOutcome granted(Answer.Acquired g, long receivedAt) {
        Config c = engine.config();
        grant = new Grant(g.token(), g.queuedMs(),
                LeaseMath.validUntil(sendStart, g.queuedMs(), leaseSeconds, c.marginFloorNanos(), c.driftRate()),
                LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(), c.driftRate()));
        return tickets.ticket(grant);
    }

    @Override
    void lost(Link s, String reason) {
        decide(() -> onWire(s) ? new AcquireOutcome.Indeterminate("the session broke before the answer: " + reason)
                : null);
    }

    @Override
    void forbidden(Link s, String reason) {
        decide(() -> onWire(s) ? new AcquireOutcome.Forbidden(reason) : null);
    }

    @Override
    byte[] key() {
        return key;
    }

    /**
     * {@code X 8} on {@code s}: nothing was executed, so the Acquire goes back to the dispatcher,
     * with the same owner and the same deadline {@code D}, towards the leader the follower named
     * (9.12, the one exception to "possibly sent is never resent").
     *
     * <p>As often as {@code X 8} comes, until {@code D}: every {@code X 8} is a confirmed answer
     * that nothing was executed, so each resend is as safe as the first, and during an election
     * (no leader for one to three seconds) a call with time left keeps looking for the new
     * leader instead of failing at once. What bounds it is 9.12's "leader discovery is bounded by
     * D": an {@code X 8} at or after {@code D} ends it as Unavailable (no grant exists: nothing was
     * executed), and so does {@code D} reached while it waits for a session (the call timer). The
     * pool backs off between seeds (50 ms doubling to 500 ms) when no leader is named, and after
     * a few named ones in a row, so this is no hot loop.
     */
    @Override
    void notExecuted(Link s, String reason) {
        long now = engine.ticker().nanoTime();
        boolean[] resend = new boolean[1];
        decide(() -> {
            if (!onWire(s)) {
                return null;
            }
            if (withdrawing) {
                return new AcquireOutcome.Cancelled("withdrawn: the server executed nothing (" + reason + ")");
            }
            if (now - deadline >= 0) {
                return new AcquireOutcome.Unavailable("no serving leader took the request before the deadline ("
                        + (notLeaderResends + 1) + " not-leader answers, last: " + reason + ")");
            }
            notLeaderResends++;
            state = State.QUEUED;
            session = null;
            resend[0] = true;
            return null;
        });
        if (resend[0]) {
            engine.dispatcher().submit(this);
        }
    }

    @Override
    void abandon(String reason) {
        decide(() -> state == State.QUEUED ? new AcquireOutcome.Unavailable(reason) : null);
    }

    /**
     * Ends the call now, from the caller's side (a cancelled future, an interrupted or overdue
     * blocking wait): not sent gives Unavailable, possibly sent gives Indeterminate; a grant that
     * still arrives is released by {@link #answer}. On a revision 1.4 session (PROTOCOL.md 9.14)
     * an acquire written whole or being written is withdrawn ({@code W} on its session, behind
     * its bytes, in the background); closing the session instead would leave a grant decided
     * before the server saw the close with nobody to release it, the key held until its lease
     * ends. On a 1.3 session the session stays open.
     */
    public void conclude(String reason) {
        Link[] withdrawOn = new Link[1];
        decide(() -> {
            if (state == State.QUEUED) {
                return new AcquireOutcome.Unavailable(reason);
            }
            if (waitMillis > 0 && session.maxWaitMillis() >= 0) {
                // 9.14.2: written whole or being written, the W goes behind its bytes on that session
                withdrawOn[0] = session;
            }
            return new AcquireOutcome.Indeterminate(reason);
        });
        if (withdrawOn[0] != null) {
            withdraw(withdrawOn[0]);
        }
    }

    /**
     * 9.14: the caller stopped waiting for this acquire, written whole on the 1.4 session
     * {@code s}: {@code W owner key} on that same session, in the background. The acquire's own
     * answer settles it: {@code T}, nothing was granted; an {@code A}, the grant came first and
     * {@link #answer} releases its token. No answer within the response grace of the {@code W}:
     * that session is closed, so the server drops the waiter.
     */
    private void withdraw(Link s) {
        SessionOnlyCall w = SessionOnlyCall.withdraw(engine, owner, key);
        if (!s.sendHere(w)) {
            return; // the session closed: the server dropped the waiter with it
        }
        long grace = engine.config().responseGraceNanos();
        engine.schedule(() -> {
            if (!answered) {
                s.close("a withdrawn Acquire got no answer within the response grace");
            }
        }, engine.ticker().nanoTime() + Math.max(grace, LeaseMath.MILLI));
    }

    /**
     * The blocking caller's own bound {@code D + grace} was reached: decide now exactly as the
     * timer would at that instant (in case the timer thread runs late).
     */
    public void expireNow() {
        onDeadline();
        onGraceEnd();
    }

    /**
     * At {@code D} (9.8): still queued gives Unavailable; a write begun but not finished gives
     * Indeterminate and closes that exact session; all bytes written waits for the grace.
     */
    private void onDeadline() {
        Link[] close = new Link[1];
        boolean[] grace = new boolean[1];
        decide(() -> switch (state) {
            case QUEUED -> {
                String why = engine.dispatcher().lastSetupFailure();
                yield new AcquireOutcome.Unavailable("no session could send the request before its deadline"
                        + (why == null ? "" : " (last connection failure: " + why + ")"));
            }
            case WRITING -> {
                close[0] = session;
                yield new AcquireOutcome.Indeterminate("the deadline passed while the request was being written");
            }
            case SENT -> {
                grace[0] = true;
                yield null;
            }
            case DONE -> null;
        });
        if (grace[0]) {
            armCallTimer(this::onGraceEnd, deadline + engine.config().responseGraceNanos());
        }
        if (close[0] != null) {
            close[0].close("an Acquire's deadline passed while it was being written");
        }
    }

    /** At {@code D + responseGrace} with no answer: Indeterminate, and that exact session is closed. */
    private void onGraceEnd() {
        Link[] close = new Link[1];
        decide(() -> {
            if (state != State.SENT && state != State.WRITING) {
                return null;
            }
            close[0] = session;
            return new AcquireOutcome.Indeterminate("no answer by the deadline plus the response grace");
        });
        if (close[0] != null) {
            close[0].close("an Acquire got no answer by its deadline plus the response grace");
        }
    }

    /**
     * The Ticket delivery gate (9.7), applied at the moment of delivery: a grant is delivered
     * only if {@code now < min(D, validUntil)}; otherwise its exact token is released and the
     * outcome is Indeterminate. Other outcomes pass unchanged.
     */
    public AcquireOutcome deliver(AcquireOutcome r) {
        Grant g;
        synchronized (this) {
            g = grant;
        }
        if (!(r instanceof AcquireOutcome.Acquired) || g == null) {
            return r;
        }
        long now = engine.ticker().nanoTime();
        if (now - LeaseMath.earliest(deadline, g.validUntil()) < 0) {
            return r;
        }
        compensate();
        return new AcquireOutcome.Indeterminate(now - deadline >= 0
                ? "the grant reached the delivery gate after the deadline; it is being released"
                : "the grant's safe validity had already ended at delivery; it is being released");
    }

    /** Releases this call's grant, which will not reach the caller (retried until its lease would have ended). */
    public void compensate() {
        Grant g;
        synchronized (this) {
            g = grant;
        }
        if (g != null) {
            engine.compensate(key, g.token(), g.leaseEndUpperBound());
        }
    }
}
