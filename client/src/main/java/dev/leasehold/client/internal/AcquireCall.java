package dev.leasehold.client.internal;

import java.util.concurrent.CompletableFuture;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * One {@code acquire} call: one owner and one deadline {@code D} for its whole life, however many
 * sessions it is offered to while it is definitely not sent (9.2 to 9.9).
 *
 * <p>Its result future is completed on the thread that decided it (a session reader, the timer,
 * a writer); callers must not attach synchronous dependents that could block.
 */
public final class AcquireCall extends Outbound {

    private final byte[] key;
    private final int waitSeconds;
    private final int leaseSeconds;
    private final long owner;
    private final long deadline;
    private final CompletableFuture<AcquireResult> result = new CompletableFuture<>();

    /** The wire wait of the (single) write; -1 before it. Guarded by {@code this}. */
    private int wireWait = -1;
    /** Sent again after an {@code X 8} (9.12 allows it once); guarded by {@code this}. */
    private boolean resentAfterNotLeader;

    AcquireCall(Engine engine, byte[] key, int waitSeconds, int leaseSeconds, long owner, long start) {
        super(engine);
        this.key = key;
        this.waitSeconds = waitSeconds;
        this.leaseSeconds = leaseSeconds;
        this.owner = owner;
        this.deadline = start + (waitSeconds == 0 ? engine.config().transportDeadlineNanos()
                : waitSeconds * LeaseMath.SECOND);
    }

    /** Arms the deadline timer; called once, before the first submit. */
    void start() {
        armTimer(this::onDeadline, deadline);
    }

    /** The correlation id of this call, the same on every attempt. */
    public long owner() {
        return owner;
    }

    /** The call's single monotonic deadline {@code D}. */
    public long deadline() {
        return deadline;
    }

    /** The wait the caller asked for, in seconds. */
    public int waitSeconds() {
        return waitSeconds;
    }

    /** The wait written on the wire, or -1 if the request was never written. */
    public synchronized int wireWait() {
        return wireWait;
    }

    /** Completes once the call is decided; see the class comment about threads. */
    public CompletableFuture<AcquireResult> result() {
        return result;
    }

    @Override
    byte[] beginWrite(Session s, long now) {
        AcquireResult done = null;
        byte[] frame;
        synchronized (this) {
            if (state != State.QUEUED) {
                return SKIP;
            }
            int wire = waitSeconds == 0 ? (now - deadline < 0 ? 0 : -1) : LeaseMath.wireWait(deadline, now);
            if (wire < 0) {
                state = State.DONE;
                done = new AcquireResult.Unavailable("the deadline passed before the request could be written");
                frame = SKIP;
            } else if (!s.register(this)) {
                return NOT_SENT;
            } else {
                state = State.WRITING;
                session = s;
                sendStart = now;
                wireWait = wire;
                frame = FrameWriter.encode(new Request.Acquire(wire, leaseSeconds, owner, key));
            }
        }
        if (done != null) {
            finish(done);
        }
        return frame;
    }

    /** A correlated {@code A}, {@code T} or {@code B} arrived on {@code s} at {@code receivedAt}. */
    void answer(Answer a, Session s, long receivedAt) {
        AcquireResult done;
        synchronized (this) {
            if (state == State.DONE || session != s) {
                done = null;
            } else {
                state = State.DONE;
                if (a instanceof Answer.Acquired g) {
                    Config c = engine.config();
                    done = new AcquireResult.Granted(g.token(), g.queuedMs(),
                            LeaseMath.validUntil(sendStart, g.queuedMs(), leaseSeconds, c.marginFloorNanos(),
                                    c.driftRate()),
                            LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(),
                                    c.driftRate()));
                } else if (a instanceof Answer.TimedOut) {
                    done = new AcquireResult.TimedOut();
                } else {
                    done = new AcquireResult.Busy();
                }
            }
        }
        if (done != null) {
            finish(done);
        } else if (a instanceof Answer.Acquired g) {
            // Decided already (Indeterminate) but the server granted: free that exact grant.
            Config c = engine.config();
            engine.compensate(key, g.token(),
                    LeaseMath.leaseEndUpperBound(receivedAt, leaseSeconds, c.marginFloorNanos(), c.driftRate()));
        }
    }

    @Override
    void lost(Session s, String reason) {
        AcquireResult done = null;
        synchronized (this) {
            if ((state == State.WRITING || state == State.SENT) && session == s) {
                state = State.DONE;
                done = new AcquireResult.Indeterminate("the session broke before the answer: " + reason);
            }
        }
        if (done != null) {
            finish(done);
        }
    }

    /**
     * {@code X 8}: nothing was executed, so the Acquire goes back to the pool, with the same owner
     * and the same deadline {@code D}, to a session on the leader the follower named (9.12). Once:
     * a second {@code X 8} ends it as Unavailable (no grant exists: nothing was executed).
     */
    @Override
    void notExecuted(Session s, String reason) {
        AcquireResult done = null;
        synchronized (this) {
            if (!((state == State.WRITING || state == State.SENT) && session == s)) {
                return;
            }
            if (resentAfterNotLeader) {
                state = State.DONE;
                done = new AcquireResult.Unavailable("no serving leader took the request: " + reason);
            } else {
                resentAfterNotLeader = true;
                state = State.QUEUED;
                session = null;
            }
        }
        if (done != null) {
            finish(done);
        } else {
            engine.pool().submit(this);
        }
    }

    @Override
    void abandon(String reason) {
        AcquireResult done = null;
        synchronized (this) {
            if (state == State.QUEUED) {
                state = State.DONE;
                done = new AcquireResult.Unavailable(reason);
            }
        }
        if (done != null) {
            finish(done);
        }
    }

    /**
     * Ends the call now, from the caller's side (a cancelled future, an interrupted or overdue
     * blocking wait): not sent gives Unavailable, possibly sent gives Indeterminate. The session
     * stays open; a grant that still arrives is released by {@link #answer}.
     */
    public void conclude(String reason) {
        AcquireResult done = null;
        synchronized (this) {
            if (state == State.QUEUED) {
                done = new AcquireResult.Unavailable(reason);
            } else if (state != State.DONE) {
                done = new AcquireResult.Indeterminate(reason);
            }
            if (done != null) {
                state = State.DONE;
            }
        }
        if (done != null) {
            finish(done);
        }
    }

    /**
     * The blocking caller's own bound {@code D + grace} was reached: decide now exactly as the
     * timer would at that instant (in case the timer thread runs late).
     */
    public void expireNow() {
        onDeadline();
        onGraceEnd();
    }

    private void onDeadline() {
        AcquireResult done = null;
        Session close = null;
        boolean armGrace = false;
        synchronized (this) {
            switch (state) {
                case QUEUED -> {
                    state = State.DONE;
                    String why = engine.pool().lastSetupFailure();
                    done = new AcquireResult.Unavailable("no session could send the request before its deadline"
                            + (why == null ? "" : " (last connection failure: " + why + ")"));
                }
                case WRITING -> {
                    state = State.DONE;
                    done = new AcquireResult.Indeterminate("the deadline passed while the request was being written");
                    close = session;
                }
                case SENT -> armGrace = true;
                case DONE -> {
                }
            }
        }
        if (armGrace) {
            armTimer(this::onGraceEnd, deadline + engine.config().responseGraceNanos());
            return;
        }
        if (done != null) {
            finish(done);
        }
        if (close != null) {
            close.close("an Acquire's deadline passed while it was being written");
        }
    }

    private void onGraceEnd() {
        Session close = null;
        synchronized (this) {
            if (state == State.SENT || state == State.WRITING) {
                state = State.DONE;
                close = session;
            }
        }
        if (close != null) {
            finish(new AcquireResult.Indeterminate("no answer by the deadline plus the response grace"));
            close.close("an Acquire got no answer by its deadline plus the response grace");
        }
    }

    private void finish(AcquireResult r) {
        cancelTimer();
        result.complete(r);
    }

    /**
     * The Ticket delivery gate (9.7), applied at the moment of delivery: a grant is delivered
     * only if {@code now < min(D, validUntil)}; otherwise its exact token is released and the
     * outcome is Indeterminate. Other results pass unchanged.
     */
    public AcquireResult deliver(AcquireResult r) {
        if (r instanceof AcquireResult.Granted g) {
            long now = System.nanoTime();
            if (now - LeaseMath.earliest(deadline, g.validUntil()) < 0) {
                return g;
            }
            compensate(g);
            return new AcquireResult.Indeterminate(now - deadline >= 0
                    ? "the grant reached the delivery gate after the deadline; it is being released"
                    : "the grant's safe validity had already ended at delivery; it is being released");
        }
        return r;
    }

    /** Releases a grant that will not reach the caller (retried until its lease would have ended). */
    public void compensate(AcquireResult.Granted g) {
        engine.compensate(key, g.token(), g.leaseEndUpperBound());
    }
}
