package dev.leasehold.server;

import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.channel.Channel;

/**
 * Refuses connections beyond {@code leasehold.max-connections} by closing them at once, so a
 * connection storm costs file descriptors for an instant, not memory for good.
 */
final class ConnectionLimiter {

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLimiter.class);
    private static final long WARN_EVERY_NANOS = 10_000_000_000L;

    private final int max;
    private final AtomicInteger open = new AtomicInteger();
    private volatile long lastWarnNanos = System.nanoTime() - WARN_EVERY_NANOS;

    ConnectionLimiter(int max) {
        this.max = max;
    }

    /** Counts the channel in if there is room; otherwise closes it and returns false. */
    boolean admit(Channel ch) {
        if (open.incrementAndGet() > max) {
            open.decrementAndGet();
            long now = System.nanoTime();
            if (now - lastWarnNanos > WARN_EVERY_NANOS) {
                lastWarnNanos = now;
                LOG.warn("Refusing connection from {}: leasehold.max-connections ({}) reached", ch.remoteAddress(), max);
            }
            ch.close();
            return false;
        }
        ch.closeFuture().addListener(f -> open.decrementAndGet());
        return true;
    }
}
