package dev.leasehold.server;

import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.registry.NanoClock;

/**
 * At most one WARN per interval for a kind of event that a client can cause at will (failed TLS
 * handshakes, protocol errors): counts the ones it holds back, so the next WARN can say how many
 * there were. Thread-safe: sessions on every event loop share one.
 */
final class WarnLimit {

    private final NanoClock clock;
    private final long intervalNanos;
    private final AtomicLong last;
    private final AtomicLong suppressed = new AtomicLong();

    WarnLimit(NanoClock clock, long intervalNanos) {
        this.clock = clock;
        this.intervalNanos = intervalNanos;
        this.last = new AtomicLong(clock.nanoTime() - intervalNanos);
    }

    /** Events held back since the last WARN if this one may warn, else -1. */
    long tryWarn() {
        long now = clock.nanoTime();
        long l = last.get();
        if (now - l >= intervalNanos && last.compareAndSet(l, now)) {
            return suppressed.getAndSet(0);
        }
        suppressed.incrementAndGet();
        return -1;
    }
}
