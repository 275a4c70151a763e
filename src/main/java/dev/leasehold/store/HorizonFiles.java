package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.NanoClock;

/**
 * The lease horizon's two files in the data directory: {@code lease-horizon} (the horizon, wall
 * clock, epoch ms) and {@code clean-stop} (the horizon a graceful stop left; 0 while a run is
 * live). What they held at start-up is the {@link PreviousRun}. Each value is a
 * {@link DurableValue}: replaced atomically and fsync'd.
 *
 * <p>Every method blocks on the disk. {@link LeaseHorizonStore} calls them while it opens, on its
 * {@link StoreThread} and in its {@code close()}: never on an event loop.
 */
final class HorizonFiles {

    private static final Logger LOG = LoggerFactory.getLogger(HorizonFiles.class);
    private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final DurableValue horizon;
    private final DurableValue cleanStop;
    private final AtomicLong writes = new AtomicLong();
    private volatile long lastWrittenMillis;
    private volatile long lastWriteTookNanos;

    HorizonFiles(DurableValue horizon, DurableValue cleanStop) {
        this.horizon = horizon;
        this.cleanStop = cleanStop;
    }

    /**
     * Reads what the previous run left (an unreadable file is reported, not fatal: the grace then
     * lasts the full 255 s), sampling both clocks after the reads, then clears a clean-stop marker
     * so that from now on a crash is not mistaken for a graceful stop.
     *
     * @param firstStart the data directory held no state of a previous run, read before any write
     * @throws IOException if the marker cannot be cleared: the data directory cannot be written
     */
    PreviousRun readPreviousRun(boolean firstStart, LongSupplier wallMillis, NanoClock mono) throws IOException {
        OptionalLong stored = OptionalLong.empty();
        String unreadable = null;
        try {
            stored = horizon.read();
        } catch (IOException e) {
            unreadable = e.getMessage();
            LOG.warn("Ignoring the lease horizon: {}. The recovery grace falls back to the full 255 s", e.getMessage());
        }
        OptionalLong stop = OptionalLong.empty();
        try {
            stop = cleanStop.read();
        } catch (IOException e) {
            LOG.warn("Ignoring the clean-stop marker: {}", e.getMessage());
        }
        PreviousRun previous = PreviousRun.classify(horizon.file(), firstStart, stored, unreadable, stop,
                wallMillis.getAsLong(), mono.nanoTime());
        if (stop.isPresent() && stop.getAsLong() != 0) {
            cleanStop.write(0);
        }
        return previous;
    }

    /** Durably writes {@code horizonMillis} and remembers how long that took (at most a second is kept). */
    void write(long horizonMillis) throws IOException {
        long t0 = System.nanoTime();
        horizon.write(horizonMillis);
        lastWriteTookNanos = Math.min(System.nanoTime() - t0, SECOND_NANOS);
        writes.incrementAndGet();
        lastWrittenMillis = horizonMillis;
    }

    /** Marks the stop as graceful: the marker holds the last horizon written (see {@link PreviousRun#classify}). */
    void markCleanStop() throws IOException {
        cleanStop.write(lastWrittenMillis);
    }

    Path file() {
        return horizon.file();
    }

    /** Successful writes of the horizon since start. */
    long writes() {
        return writes.get();
    }

    /** The horizon last written successfully (epoch ms); 0 before the first write. */
    long lastWrittenMillis() {
        return lastWrittenMillis;
    }

    /** How long the last successful write took, capped at a second. */
    long lastWriteTookNanos() {
        return lastWriteTookNanos;
    }
}
