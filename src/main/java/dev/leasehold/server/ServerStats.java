package dev.leasehold.server;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.leasehold.protocol.ErrorCode;

/** Counters the server keeps about its sessions, read by health and metrics. */
public final class ServerStats {

    private final AtomicInteger sessions = new AtomicInteger();
    private final LongAdder[] protocolErrors = new LongAdder[ErrorCode.values().length];
    private final AtomicInteger openWatches = new AtomicInteger();
    private final LongAdder eventsSent = new LongAdder();
    private final LongAdder eventsCoalesced = new LongAdder();

    public ServerStats() {
        for (int i = 0; i < protocolErrors.length; i++) {
            protocolErrors[i] = new LongAdder();
        }
    }

    /** Open protocol sessions. */
    public int sessions() {
        return sessions.get();
    }

    /** {@code X} frames sent with this code since start. */
    public long protocolErrors(ErrorCode code) {
        return protocolErrors[code.ordinal()].sum();
    }

    /** Watches open over all sessions (PROTOCOL.md section 16). */
    public int openWatches() {
        return openWatches.get();
    }

    /** Watch events written since start. */
    public long eventsSent() {
        return eventsSent.sum();
    }

    /**
     * Watch events folded into a later one since start (PROTOCOL.md 16.4): each time a newer
     * event replaced one not yet written.
     */
    public long eventsCoalesced() {
        return eventsCoalesced.sum();
    }

    /** Counts a new watch unless {@code max} are open already ({@code leasehold.max-watches-total}). */
    boolean tryOpenWatch(int max) {
        while (true) {
            int n = openWatches.get();
            if (n >= max) {
                return false;
            }
            if (openWatches.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    void watchClosed() {
        openWatches.decrementAndGet();
    }

    void eventSent() {
        eventsSent.increment();
    }

    void eventCoalesced() {
        eventsCoalesced.increment();
    }

    void sessionOpened() {
        sessions.incrementAndGet();
    }

    void sessionClosed() {
        sessions.decrementAndGet();
    }

    void protocolError(ErrorCode code) {
        protocolErrors[code.ordinal()].increment();
    }
}
