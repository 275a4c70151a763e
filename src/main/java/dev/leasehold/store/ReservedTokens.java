package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.registry.TokenSource;

/**
 * Fencing tokens that never go backwards, even after {@code kill -9}: tokens are issued only
 * below a high-water mark that has already been fsync'd. The mark moves ahead in blocks, on a
 * dedicated thread, as soon as half of the current block is used, so under steady load a grant
 * never waits for the disk and the disk sees one write per half block.
 *
 * <p>After a crash the unused rest of the last block is skipped: tokens have gaps, never repeats.
 * If the disk cannot keep up or fails, {@link #next()} returns {@link TokenSource#NONE} (the
 * Acquire gets Busy) until a write succeeds again.
 */
public final class ReservedTokens implements TokenSource, StorageStatus, AutoCloseable {

    private static final long RETRY_AFTER_FAILURE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final DurableLong highWater;
    private final long blockSize;
    private final AtomicLong lastIssued;
    private volatile long reservedUpTo;
    private final AtomicBoolean writing = new AtomicBoolean();
    private final AtomicLong writes = new AtomicLong();
    private final ExecutorService writer;
    private volatile IOException lastFailure;
    private volatile long lastFailureNanos;

    private ReservedTokens(DurableLong highWater, long blockSize, long lastIssued, long reservedUpTo) {
        this.highWater = highWater;
        this.blockSize = blockSize;
        this.lastIssued = new AtomicLong(lastIssued);
        this.reservedUpTo = reservedUpTo;
        this.writer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "leasehold-token-store");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Reads the high-water mark in {@code dataDir} (every token at or below it may have been
     * issued) and durably reserves the first block above it before returning.
     */
    public static ReservedTokens open(Path dataDir, long blockSize) throws IOException {
        DurableLong file = new DurableLong(dataDir.resolve("tokens"), "tokens");
        long previous = file.read().orElse(0L);
        if (previous < 0) {
            throw new CorruptStateException(file.file(), "negative high-water mark " + previous);
        }
        long reserved = previous + blockSize;
        file.write(reserved);
        ReservedTokens tokens = new ReservedTokens(file, blockSize, previous, reserved);
        tokens.writes.incrementAndGet();
        return tokens;
    }

    @Override
    public long next() {
        while (true) {
            long last = lastIssued.get();
            long limit = reservedUpTo;
            if (last >= limit) {
                reserveAhead();
                return NONE;
            }
            if (lastIssued.compareAndSet(last, last + 1)) {
                if (limit - (last + 1) < blockSize / 2) {
                    reserveAhead();
                }
                return last + 1;
            }
        }
    }

    /** The highest token issued so far (0 if none). */
    public long lastIssued() {
        return lastIssued.get();
    }

    /** The durable high-water mark: no token above it has been issued. */
    public long reservedUpTo() {
        return reservedUpTo;
    }

    /** fsync'd writes of the high-water mark since start (one at start, then one per half block). */
    public long writes() {
        return writes.get();
    }

    /** The latest write failure, or null if the last write succeeded. */
    public IOException lastFailure() {
        return lastFailure;
    }

    @Override
    public java.util.Optional<String> problem() {
        IOException e = lastFailure;
        return e == null ? java.util.Optional.empty()
                : java.util.Optional.of("cannot write " + highWater.file() + ": " + e.getMessage());
    }

    public Path file() {
        return highWater.file();
    }

    private void reserveAhead() {
        if (lastFailure != null && System.nanoTime() - lastFailureNanos < RETRY_AFTER_FAILURE_NANOS) {
            return; // a failing disk is retried once a second, not once per Acquire
        }
        if (!writing.compareAndSet(false, true)) {
            return;
        }
        try {
            writer.execute(this::writeNextBlock);
        } catch (RuntimeException rejectedAfterClose) {
            writing.set(false);
        }
    }

    private void writeNextBlock() {
        try {
            long target = Math.max(lastIssued.get(), reservedUpTo) + blockSize;
            highWater.write(target);
            writes.incrementAndGet();
            reservedUpTo = target;
            lastFailure = null;
        } catch (IOException e) {
            lastFailureNanos = System.nanoTime();
            lastFailure = e;
        } finally {
            writing.set(false);
        }
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
