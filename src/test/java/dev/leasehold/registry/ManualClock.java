package dev.leasehold.registry;

import java.util.concurrent.TimeUnit;

/** A clock that moves only when told to. */
final class ManualClock implements NanoClock {

    private long now = 1_000_000_000_000L;

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    synchronized void advanceMillis(long millis) {
        now += TimeUnit.MILLISECONDS.toNanos(millis);
    }

    synchronized void advanceNanos(long nanos) {
        now += nanos;
    }
}
