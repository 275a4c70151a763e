package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The registry's view of a client session: whether it is still open, and which of its Acquires
 * are waiting. Queued Acquires belong to their session (dropped when it closes); grants do not.
 *
 * <p>The waiter set is guarded by this object's monitor, which is only ever taken inside a
 * lane lock or alone, never the other way round, so there is no lock-order cycle.
 */
public class SessionHandle {

    /**
     * Who a session is, for operators (inspect): its peer address and, with mutual TLS, the
     * client certificate's identity (null without one). Set once by the server; shared by every
     * grant the session takes, so a grant costs one reference, not a copy.
     *
     * @param address the peer's address, e.g. {@code 10.0.0.7:51234}
     * @param identity the client certificate's subject, or null
     */
    public record Peer(String address, String identity) {

        /** Not known: a session that has not described itself (tests, tools). */
        public static final Peer UNKNOWN = new Peer("unknown", null);

        /** A grant a previous cluster leader made: its session lived on that node. */
        public static final Peer PREVIOUS_LEADER = new Peer("granted before this node led", null);
    }

    private volatile Peer peer = Peer.UNKNOWN;
    private volatile boolean closed;
    private final Set<Waiter> waiting = new HashSet<>();

    public final boolean isClosed() {
        return closed;
    }

    /** Who this session is (see {@link Peer}); {@link Peer#UNKNOWN} until described. */
    public final Peer peer() {
        return peer;
    }

    /** Sets who this session is; the server calls it once the peer (and its certificate) is known. */
    public final void describe(Peer who) {
        peer = who;
    }

    /** Acquires of this session still waiting in some queue. */
    public final synchronized int waitingCount() {
        return waiting.size();
    }

    synchronized boolean tryAdd(Waiter w, int limit) {
        if (waiting.size() >= limit) {
            return false;
        }
        waiting.add(w);
        return true;
    }

    synchronized void remove(Waiter w) {
        waiting.remove(w);
    }

    /** Marks the session closed and hands back its waiters, for the registry to unlink. */
    synchronized List<Waiter> close() {
        closed = true;
        List<Waiter> snapshot = new ArrayList<>(waiting);
        waiting.clear();
        return snapshot;
    }
}
