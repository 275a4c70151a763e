package dev.leasehold.testing;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import dev.leasehold.registry.NanoClock;

/** A monotonic clock and a wall clock that move together, only when a test says so. */
public final class ManualClocks implements NanoClock {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicLong wallMillis = new AtomicLong(1_700_000_000_000L);

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    public LongSupplier wall() {
        return wallMillis::get;
    }

    public long wallMillis() {
        return wallMillis.get();
    }

    /** Moves both clocks forward. */
    public void advance(long amount, TimeUnit unit) {
        nanos.addAndGet(unit.toNanos(amount));
        wallMillis.addAndGet(unit.toMillis(amount));
    }

    /** Steps only the wall clock (NTP correction, a VM resumed). */
    public void stepWall(long millis) {
        wallMillis.addAndGet(millis);
    }
}
