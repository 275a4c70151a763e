package dev.leasehold.client.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.protocol.Answer;

/**
 * The correlation half of a session: which request each answer belongs to (PROTOCOL.md 1).
 * Acquire answers by owner, Release, Extend and Check answers by token in request order (FIFO per
 * token), Pongs by nonce. The {@link Session} that owns it does the connecting and the I/O.
 *
 * <p>Threading: guarded by its own monitor, never held while a request is called. Once
 * {@link #close closed} it registers nothing more, so a request that registers either is handed
 * back by {@code close} (and told it is lost) or learns at once that the session is gone.
 */
final class Correlator {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");

    private final Link link;
    private final Map<Long, AcquireCall> owners = new HashMap<>();
    private final Map<Long, ArrayDeque<TokenCall<?>>> tokens = new HashMap<>();
    private final Map<Long, PingCall> pings = new HashMap<>();
    /** Subscriptions by watch id (9.15): open until their {@code B}, {@code U} or the session's end. */
    private final Map<Long, ObserveCall> watches = new HashMap<>();
    private int tokenCalls;
    private boolean closed;

    /** @param link the session answers arrive on, passed to each request with its answer */
    Correlator(Link link) {
        this.link = link;
    }

    /** Registers {@code o} for its answer; false once closed. */
    synchronized boolean register(Outbound<?> o) {
        if (closed) {
            return false;
        }
        if (o instanceof AcquireCall c) {
            owners.put(c.owner(), c);
        } else if (o instanceof TokenCall<?> c) {
            tokens.computeIfAbsent(c.token(), t -> new ArrayDeque<>()).add(c);
            tokenCalls++;
        } else if (o instanceof PingCall c) {
            pings.put(c.nonce(), c);
        } else if (o instanceof ObserveCall c) {
            watches.put(c.watch(), c);
        } else if (o instanceof SessionOnlyCall) {
            return true; // no answer of its own: the withdrawn acquire's (9.14), the watch's U (16.1)
        } else {
            throw new IllegalArgumentException("unknown request " + o);
        }
        return true;
    }

    /** Requests awaiting an answer (open watches are not: they may stay open for days). */
    synchronized int size() {
        return owners.size() + tokenCalls + pings.size();
    }

    /** Closes the tables and returns every request that was awaiting an answer. */
    synchronized List<Outbound<?>> close() {
        closed = true;
        List<Outbound<?>> all = new ArrayList<>(owners.values());
        tokens.values().forEach(all::addAll);
        all.addAll(pings.values());
        all.addAll(watches.values());
        watches.clear();
        owners.clear();
        tokens.clear();
        pings.clear();
        tokenCalls = 0;
        return all;
    }

    /**
     * Hands a correlated answer ({@code A T B R E C N P}) to its request, received at
     * {@code receivedAt}. The switch over {@code AnswerType} has no default: a new answer type does
     * not compile until it says here what it correlates by.
     *
     * @return whether a request was waiting for the answer (one that was not is logged or, for a
     *     Pong, dropped)
     */
    boolean dispatch(Answer a, long receivedAt) {
        return switch (a.type()) {
            case ACQUIRED -> acquireAnswer(((Answer.Acquired) a).owner(), a, receivedAt);
            case TIMED_OUT -> acquireAnswer(((Answer.TimedOut) a).owner(), a, receivedAt);
            case BUSY -> watchBusy(((Answer.Busy) a).owner()) || acquireAnswer(((Answer.Busy) a).owner(), a, receivedAt);
            case LIMIT_MISMATCH -> acquireAnswer(((Answer.LimitMismatch) a).owner(), a, receivedAt);
            case RELEASED -> tokenAnswer(((Answer.Released) a).token(), a, receivedAt);
            case EXTENDED -> tokenAnswer(((Answer.Extended) a).token(), a, receivedAt);
            case NOT_HELD -> tokenAnswer(((Answer.NotHeld) a).token(), a, receivedAt);
            case CURRENT -> tokenAnswer(((Answer.Current) a).token(), a, receivedAt);
            case PONG -> pong(((Answer.Pong) a).nonce(), receivedAt);
            // The Hello is sent only to open a session, and its answer read by the Connector.
            case HELLO -> false;
            case VALUE_SET -> tokenAnswer(((Answer.ValueSet) a).token(), a, receivedAt);
            case EVENT -> watchEvent((Answer.Event) a);
            case UNOBSERVED -> watchEnded(((Answer.Unobserved) a).watch());
            case ERROR -> throw new IllegalArgumentException("not a correlated answer: " + a);
        };
    }

    /** An event (16.1) to its open watch. */
    private boolean watchEvent(Answer.Event e) {
        ObserveCall call;
        synchronized (this) {
            call = watches.get(e.watch());
        }
        if (call != null) {
            call.event(link, e);
        }
        return call != null;
    }

    /** {@code U watch}: the watch's last frame. */
    private boolean watchEnded(long watch) {
        ObserveCall call;
        synchronized (this) {
            call = watches.remove(watch);
        }
        if (call != null) {
            call.unobserved(link);
        }
        return call != null;
    }

    /** A {@code B} naming an open subscription (watch ids and owners come from one counter, 9.15.1). */
    private boolean watchBusy(long watch) {
        ObserveCall call;
        synchronized (this) {
            call = watches.remove(watch);
        }
        if (call != null) {
            call.busy(link);
        }
        return call != null;
    }

    private boolean pong(long nonce, long receivedAt) {
        PingCall call;
        synchronized (this) {
            call = pings.remove(nonce);
        }
        if (call != null) {
            call.answer(link, receivedAt);
        }
        return call != null;
    }

    private boolean acquireAnswer(long owner, Answer a, long receivedAt) {
        AcquireCall call;
        synchronized (this) {
            call = owners.remove(owner);
        }
        if (call != null) {
            call.answer(a, link, receivedAt);
        } else {
            LOG.log(System.Logger.Level.WARNING, () -> link + ": answer for an unknown owner: " + a);
        }
        return call != null;
    }

    private boolean tokenAnswer(long token, Answer a, long receivedAt) {
        TokenCall<?> call = null;
        synchronized (this) {
            ArrayDeque<TokenCall<?>> q = tokens.get(token);
            if (q != null) {
                call = q.poll();
                tokenCalls--;
                if (q.isEmpty()) {
                    tokens.remove(token);
                }
            }
        }
        if (call != null) {
            call.answer(a, link, receivedAt);
        } else {
            LOG.log(System.Logger.Level.WARNING, () -> link + ": answer for an unknown token " + token + ": " + a);
        }
        return call != null;
    }
}
