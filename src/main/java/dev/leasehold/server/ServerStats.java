package dev.leasehold.server;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.leasehold.protocol.ErrorCode;

/** Counters the server keeps about its sessions, read by health and metrics. */
public final class ServerStats {

    private final AtomicInteger sessions = new AtomicInteger();
    private final LongAdder[] protocolErrors = new LongAdder[ErrorCode.values().length];

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
