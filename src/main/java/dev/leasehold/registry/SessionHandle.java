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

    private volatile boolean closed;
    private final Set<Waiter> waiting = new HashSet<>();

    public final boolean isClosed() {
        return closed;
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
