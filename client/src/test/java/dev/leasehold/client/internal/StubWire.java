package dev.leasehold.client.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.RequestReader;

/**
 * An {@link Engine} on {@link ManualTime} whose requests go nowhere by themselves: the test plays
 * the session. {@link #write} is the session's writer (take what was submitted, register it,
 * write it, all at the manual "now"), {@link #answer} its reader, {@link #breakSession} a broken
 * connection. No thread, no socket, no sleep: every rule of PROTOCOL.md section 9 that depends on
 * time can be checked at its exact instant.
 *
 * <p>Settings: transport deadline 5 s, response grace 2 s, margin floor 50 ms, drift 1 %.
 */
public final class StubWire implements AutoCloseable {

    public static final long SECOND = LeaseMath.SECOND;
    public static final long TRANSPORT_DEADLINE = 5 * SECOND;
    public static final long GRACE = 2 * SECOND;
    public static final long MARGIN_FLOOR = 50 * ManualTime.MS;
    public static final double DRIFT = 0.01;

    /** A session as a request sees it; records what the request did to it. */
    final class StubLink implements Link {
        final List<Outbound<?>> registered = new ArrayList<>();
        final List<String> closeReasons = new ArrayList<>();
        boolean closed;
        /** The server's max_wait_ms from its Hello: -1 plays a 1.3 session (the default). */
        long maxWaitMillis = defaultMaxWait;
        /** The server's max_value_bytes from its Hello: -1 on a 1.3 session. */
        int maxValueBytes = defaultMaxValue;

        @Override
        public boolean register(Outbound<?> o) {
            if (closed) {
                return false;
            }
            if (!(o instanceof SessionOnlyCall)) { // no answer of its own, as in the Correlator
                registered.add(o);
            }
            return true;
        }

        @Override
        public long maxWaitMillis() {
            return maxWaitMillis;
        }

        @Override
        public int maxValueBytes() {
            return maxValueBytes;
        }

        /** A request for this session only (a Withdraw): queued with the submitted ones, written by {@link #write}. */
        @Override
        public boolean sendHere(Outbound<?> o) {
            if (closed) {
                return false;
            }
            synchronized (StubWire.this) {
                submitted.add(o);
            }
            return true;
        }

        @Override
        public void close(String reason) {
            close(reason, false);
        }

        /** As the real session: {@code notExecuted} after a cluster follower's {@code X 8}. */
        void close(String reason, boolean notExecuted) {
            if (closed) {
                return;
            }
            closed = true;
            closeReasons.add(reason);
            List<Outbound<?>> lost = new ArrayList<>(registered);
            registered.clear();
            for (Outbound<?> o : lost) {
                if (notExecuted) {
                    o.notExecuted(this, reason);
                } else {
                    o.lost(this, reason);
                }
            }
        }
    }

    /** What a new session's Hello says (see {@link #speak14Everywhere}): 1.3 by default. */
    private long defaultMaxWait = -1;
    private int defaultMaxValue = -1;
    public final ManualTime time = new ManualTime();
    private final Engine engine;
    private final Deque<Outbound<?>> submitted = new ArrayDeque<>();
    private final List<Outbound<?>> writing = new ArrayList<>();
    private final List<String> closed = new ArrayList<>();
    private StubLink link = new StubLink();
    private String setupFailure;

    public StubWire() {
        Config config = new Config(List.of(InetSocketAddress.createUnresolved("stub", 1)), 1, SECOND,
                TRANSPORT_DEADLINE, GRACE, MARGIN_FLOOR, DRIFT, "stub", null, false).withTime(time, time);
        engine = new Engine(config, e -> new Dispatcher() {
            @Override
            public void submit(Outbound<?> o) {
                synchronized (StubWire.this) {
                    submitted.add(o);
                }
            }

            @Override
            public String lastSetupFailure() {
                return setupFailure;
            }

            @Override
            public boolean millisecondWaits() {
                return link.maxWaitMillis >= 0;
            }

            @Override
            public List<Session> sessions() {
                return List.of();
            }

            @Override
            public List<Session> close() {
                List<Outbound<?>> left;
                synchronized (StubWire.this) {
                    left = new ArrayList<>(submitted);
                    submitted.clear();
                }
                left.forEach(o -> o.abandon("the client is closed"));
                link.close("the client is closed"); // as the real pool closes its sessions: what was on them is lost
                return List.of();
            }
        });
    }

    public Engine engine() {
        return engine;
    }

    /** From now on the session speaks revision 1.4 with this {@code max_wait_ms} (as after its Hello). */
    public void speak14(long maxWaitMillis) {
        link.maxWaitMillis = maxWaitMillis;
    }

    /** This session and every later one speak 1.4 with these limits (as after their Hellos). */
    public void speak14Everywhere(long maxWaitMillis, int maxValueBytes) {
        defaultMaxWait = maxWaitMillis;
        defaultMaxValue = maxValueBytes;
        link.maxWaitMillis = maxWaitMillis;
        link.maxValueBytes = maxValueBytes;
    }

    /** From now on this session and every later one speak 1.3 (as after an {@code X 1} to the Hello). */
    public void speak13Everywhere() {
        speak14Everywhere(-1, -1);
    }

    /** Requests offered to the pool and not yet taken by {@link #write}. */
    public synchronized int submitted() {
        return submitted.size();
    }

    /** Reasons the sessions were closed by requests, in order. */
    public List<String> closedSessions() {
        List<String> all = new ArrayList<>(closed);
        all.addAll(link.closeReasons);
        return all;
    }

    /** Writes every submitted request on the current session, now; returns the frames sent. */
    public List<Request> write() {
        List<Request> sent = beginWrite();
        finishWrite();
        return sent;
    }

    /** Only the first half of {@link #write}: the requests are possibly sent, their bytes not all written. */
    public List<Request> beginWrite() {
        List<Outbound<?>> batch;
        synchronized (this) {
            batch = new ArrayList<>(submitted);
            submitted.clear();
        }
        long now = time.nanoTime();
        List<Request> sent = new ArrayList<>();
        for (Outbound<?> o : batch) {
            byte[] frame = o.beginWrite(link, now);
            if (frame == Outbound.NOT_SENT) {
                o.notSent(link);
            } else if (frame != Outbound.SKIP) {
                writing.add(o);
                sent.add(read(frame));
            }
        }
        return sent;
    }

    /**
     * The writer takes the submitted requests, but its session has closed meanwhile: they must
     * refuse to start (NOT_SENT) and go back to the pool. Returns how many frames were produced.
     */
    public int writeOnClosedSession() {
        List<Outbound<?>> batch;
        synchronized (this) {
            batch = new ArrayList<>(submitted);
            submitted.clear();
        }
        StubLink closedLink = new StubLink();
        closedLink.closed = true;
        int frames = 0;
        for (Outbound<?> o : batch) {
            byte[] frame = o.beginWrite(closedLink, time.nanoTime());
            if (frame == Outbound.NOT_SENT) {
                o.notSent(closedLink);
            } else if (frame != Outbound.SKIP) {
                frames++;
            }
        }
        return frames;
    }

    /** Every byte of the requests being written has reached the socket. */
    public void finishWrite() {
        for (Outbound<?> o : writing) {
            o.written(link);
        }
        writing.clear();
    }

    /** The server's answer arrives now, correlated as the real session does. */
    public void answer(Answer a) {
        if (a instanceof Answer.Event || a instanceof Answer.Unobserved) {
            watchAnswer(a);
            return;
        }
        long key = switch (a.type()) {
            case ACQUIRED -> ((Answer.Acquired) a).owner();
            case TIMED_OUT -> ((Answer.TimedOut) a).owner();
            case BUSY -> ((Answer.Busy) a).owner();
            case LIMIT_MISMATCH -> ((Answer.LimitMismatch) a).owner();
            case RELEASED -> ((Answer.Released) a).token();
            case EXTENDED -> ((Answer.Extended) a).token();
            case NOT_HELD -> ((Answer.NotHeld) a).token();
            case CURRENT -> ((Answer.Current) a).token();
            case PONG -> ((Answer.Pong) a).nonce();
            case VALUE_SET -> ((Answer.ValueSet) a).token();
            case HELLO, ERROR, EVENT, UNOBSERVED -> throw new IllegalArgumentException("not correlated: " + a);
        };
        for (Iterator<Outbound<?>> it = link.registered.iterator(); it.hasNext();) {
            Outbound<?> o = it.next();
            long id = o instanceof AcquireCall c ? c.owner() : o instanceof TokenCall<?> t ? t.token()
                    : o instanceof ObserveCall w ? w.watch() : ((PingCall) o).nonce();
            if (id == key) {
                it.remove();
                long now = time.nanoTime();
                if (o instanceof ObserveCall w) {
                    w.busy(link); // B watch: ids and owners come from one counter
                } else if (o instanceof AcquireCall c) {
                    c.answer(a, link, now);
                } else if (o instanceof TokenCall<?> t) {
                    t.answer(a, link, now);
                } else {
                    ((PingCall) o).answer(link, now);
                }
                return;
            }
        }
        throw new AssertionError("no request waits for " + a);
    }

    /** An event goes to its watch, a {@code U} ends it, as in the Correlator. */
    private void watchAnswer(Answer a) {
        long watch = a instanceof Answer.Event e ? e.watch() : ((Answer.Unobserved) a).watch();
        for (Iterator<Outbound<?>> it = link.registered.iterator(); it.hasNext();) {
            if (it.next() instanceof ObserveCall w && w.watch() == watch) {
                if (a instanceof Answer.Event e) {
                    w.event(link, e);
                } else {
                    it.remove();
                    w.unobserved(link);
                }
                return;
            }
        }
        throw new AssertionError("no watch waits for " + a);
    }

    /** The current session breaks; later writes go to a new one. */
    public void breakSession(String reason) {
        StubLink old = link;
        link = new StubLink();
        old.close(reason);
        closed.addAll(old.closeReasons);
    }

    /**
     * A cluster follower answers {@code X 8} on the current session now (PROTOCOL.md 9.12):
     * nothing of it was executed and it closes; later writes go to a new one.
     */
    public void notLeader(String reason) {
        StubLink old = link;
        link = new StubLink();
        old.close(reason, true);
        closed.addAll(old.closeReasons);
    }

    /** Whether a request closed the current session (it is then replaced by a fresh one). */
    public boolean sessionClosedByRequest() {
        if (!link.closed) {
            return false;
        }
        closed.addAll(link.closeReasons);
        link = new StubLink();
        return true;
    }

    /** The next connection attempt fails with this reason (what the pool would report). */
    public void setupFailure(String reason) {
        setupFailure = reason;
    }

    private static Request read(byte[] frame) {
        try {
            return new RequestReader().next(ByteBuffer.wrap(frame));
        } catch (ProtocolException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public void close() {
        engine.close();
    }
}
