package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.NanoClock;

/**
 * The lease horizon of PROTOCOL.md section 8: a wall-clock instant, kept fsync'd in
 * {@code <data-dir>/lease-horizon}, after which no lease handed out by this run can still be
 * running. After a crash the next run reads it and holds every key until it has passed
 * (at most 255 s), so no key gets a second holder while a lease of the crashed run may still
 * be in use.
 *
 * <h2>Ahead of need</h2>
 * A lease can be up to 255 s long and a grant must never wait for the disk, so the stored
 * horizon is always at least {@code now + 255 s}: this store writes
 * {@code now + 255 s + lookahead + slack} and rewrites it, on its own thread, when less than
 * {@code 255 s + lookahead / 2} of it remains. With the default lookahead of 120 s that is one
 * durable write (file fsync, rename, directory fsync) a minute, whatever the load, and a grant
 * or Extend only compares two longs ({@link #covers(long)}).
 *
 * <h2>Monotonic to wall time</h2>
 * Leases are measured on the monotonic clock; the file holds wall-clock milliseconds. At each
 * write the two clocks are sampled together: the write covers monotonic instants up to
 * {@code sampleNanos + 255 s + lookahead}, and records wall time
 * {@code sampleMillis + 255 s + lookahead + slack}. The slack absorbs the wall clock stepping
 * forward between runs (NTP correcting a clock that was behind): if it steps forward by more
 * than the slack across a restart, the next grace comes out too short by the difference. Users
 * who cannot rule that out set {@code leasehold.recovery-grace: 255s}, which ignores this file.
 *
 * <h2>Shutdown</h2>
 * {@link #close()} (after the drain) stops approving leases and lowers the horizon to the
 * latest lease end actually handed out, plus the slack, so a restart after a graceful stop
 * waits only for leases that really are still running. It never goes below the previous run's
 * horizon (capped at 255 s after start).
 *
 * <h2>Failures</h2>
 * A failed write is reported by {@link #problem()} at once and retried every check period.
 * Leases covered by the last successful write stay grantable: the disk already records them;
 * once {@code now + lease} passes the coverage, grants get Busy and Extends get Not held until
 * a write succeeds again.
 */
public final class LeaseHorizonStore implements LeaseHorizon, StorageStatus, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseHorizonStore.class);

    /** The longest lease the protocol allows (lease is a u8 of seconds). */
    public static final Duration MAX_LEASE = Duration.ofSeconds(255);

    /**
     * @param lookahead how far beyond {@code now + 255 s} the horizon is written; it is rewritten
     *        when half of this is used, so this sets the write rate (one per {@code lookahead / 2})
     * @param slack added to the stored wall time: tolerated forward step of the wall clock
     *        across a restart
     * @param checkPeriod how often the store thread checks the horizon (and retries a failed write)
     */
    public record Settings(Duration lookahead, Duration slack, Duration checkPeriod) {
        public static final Settings DEFAULTS = new Settings(Duration.ofSeconds(120), Duration.ofSeconds(5),
                Duration.ofSeconds(1));

        public Settings {
            if (lookahead.isNegative() || lookahead.isZero() || slack.isNegative() || checkPeriod.isNegative()
                    || checkPeriod.isZero() || checkPeriod.compareTo(lookahead.dividedBy(2)) >= 0) {
                throw new IllegalArgumentException("invalid lease horizon settings " + this);
            }
        }
    }

    /**
     * What the previous run left behind, read at start-up.
     *
     * @param horizonMillis the stored horizon (epoch ms), empty when the file is missing or unreadable
     * @param unreadable why the file could not be used, or null
     * @param readMillis wall time of the read
     * @param readNanos monotonic time of the read
     */
    public record Previous(Path file, OptionalLong horizonMillis, String unreadable, long readMillis, long readNanos) {

        /**
         * The grace of {@code leasehold.recovery-grace: auto}: {@code min(255 s, horizon − now)},
         * not below 0; the full 255 s when there is no usable horizon.
         */
        public Duration autoGrace() {
            if (horizonMillis.isEmpty()) {
                return MAX_LEASE;
            }
            long left = horizonMillis.getAsLong() - readMillis;
            return Duration.ofMillis(Math.max(0, Math.min(MAX_LEASE.toMillis(), left)));
        }

        /** Plain-words account of the file, for the start-up log. */
        public String describe() {
            if (unreadable != null) {
                return "lease horizon " + file + " unreadable (" + unreadable + "), so the full 255 s";
            }
            if (horizonMillis.isEmpty()) {
                return "no lease horizon in " + file + " (first start, or the file was lost), so the full 255 s";
            }
            long left = horizonMillis.getAsLong() - readMillis;
            return "lease horizon " + Instant.ofEpochMilli(horizonMillis.getAsLong()) + " in " + file + ", "
                    + (left > 0 ? left + " ms from now" : "already passed");
        }
    }

    private final DurableValue file;
    private final NanoClock mono;
    private final LongSupplier wallMillis;
    private final long maxLeaseNanos = MAX_LEASE.toNanos();
    private final long lookaheadNanos;
    private final long slackMillis;
    private final Previous previous;
    /** The previous run's horizon, capped at 255 s + slack after start: never written below. */
    private final long floorMillis;

    /** Monotonic instant up to which lease ends are on disk. Written by one thread at a time. */
    private volatile long coveredUntilNanos;
    /** Latest lease end approved by {@link #covers(long)}. */
    private final AtomicLong approvedMax;
    private volatile boolean closed;
    private volatile long lastWrittenMillis;
    private final AtomicLong writes = new AtomicLong();
    private volatile IOException lastFailure;
    private final ScheduledThreadPoolExecutor thread;

    private LeaseHorizonStore(DurableValue file, Settings settings, NanoClock mono, LongSupplier wallMillis,
            Previous previous) {
        this.file = file;
        this.mono = mono;
        this.wallMillis = wallMillis;
        this.lookaheadNanos = settings.lookahead().toNanos();
        this.slackMillis = settings.slack().toMillis();
        this.previous = previous;
        long cap = previous.readMillis() + MAX_LEASE.toMillis() + slackMillis;
        this.floorMillis = Math.min(previous.horizonMillis().orElse(Long.MIN_VALUE), cap);
        this.coveredUntilNanos = previous.readNanos();
        this.approvedMax = new AtomicLong(previous.readNanos());
        this.thread = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "leasehold-horizon-store");
            t.setDaemon(true);
            return t;
        });
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Opens {@code <dataDir>/lease-horizon} with the default settings and system clocks. */
    public static LeaseHorizonStore open(Path dataDir, DurableFiles files) throws IOException {
        return open(files.open(dataDir.resolve("lease-horizon"), "lease-horizon"), Settings.DEFAULTS,
                NanoClock.SYSTEM, System::currentTimeMillis, true);
    }

    /**
     * Reads what the previous run left (an unreadable file is reported, not fatal: the grace
     * then lasts the full 255 s), then durably writes a horizon covering every lease that can be
     * granted now, before returning.
     *
     * @param startThread false for tests that drive {@link #maintain()} themselves
     * @throws IOException if the first write fails: the data directory cannot be written
     */
    public static LeaseHorizonStore open(DurableValue file, Settings settings, NanoClock mono,
            LongSupplier wallMillis, boolean startThread) throws IOException {
        OptionalLong stored = OptionalLong.empty();
        String unreadable = null;
        try {
            stored = file.read();
        } catch (IOException e) {
            unreadable = e.getMessage();
            log.warn("Ignoring the lease horizon: {}. The recovery grace falls back to the full 255 s", e.getMessage());
        }
        Previous previous = new Previous(file.file(), stored, unreadable, wallMillis.getAsLong(), mono.nanoTime());
        LeaseHorizonStore store = new LeaseHorizonStore(file, settings, mono, wallMillis, previous);
        store.writeAhead();
        if (startThread) {
            long period = settings.checkPeriod().toMillis();
            store.thread.scheduleWithFixedDelay(store::maintain, period, period, TimeUnit.MILLISECONDS);
        }
        return store;
    }

    public Previous previous() {
        return previous;
    }

    /**
     * True if a lease ending at {@code leaseEndNanos} is already on disk. Never blocks; called
     * under registry lane locks for every grant and Extend. False after {@link #close()}.
     */
    @Override
    public boolean covers(long leaseEndNanos) {
        if (leaseEndNanos - coveredUntilNanos > 0) {
            return false;
        }
        long cur;
        while ((cur = approvedMax.get()) - leaseEndNanos < 0 && !approvedMax.compareAndSet(cur, leaseEndNanos)) {
            // retry: another lane raised it meanwhile
        }
        // Read after publishing the end: close() sets the flag, then reads approvedMax, so
        // either it sees this end or this call sees the flag.
        return !closed;
    }

    /**
     * Rewrites the horizon if less than {@code 255 s + lookahead / 2} of it remains, or if the
     * last write failed. Runs on the store thread every check period.
     */
    void maintain() {
        if (closed) {
            return;
        }
        if (lastFailure == null && coveredUntilNanos - mono.nanoTime() >= maxLeaseNanos + lookaheadNanos / 2) {
            return;
        }
        try {
            writeAhead();
            if (lastFailure != null) {
                log.info("Lease horizon {} is writable again", file.file());
            }
            lastFailure = null;
        } catch (IOException e) {
            if (lastFailure == null) {
                log.warn("Cannot write the lease horizon {} ({}); grants continue only while the last written"
                        + " horizon covers their lease, retrying every second", file.file(), e.toString());
            }
            lastFailure = e;
        } catch (RuntimeException e) {
            lastFailure = new IOException(e);
            log.error("Lease horizon write failed unexpectedly", e);
        }
    }

    private void writeAhead() throws IOException {
        long nowNanos = mono.nanoTime();
        long nowMillis = wallMillis.getAsLong();
        long ahead = maxLeaseNanos + lookaheadNanos;
        long horizon = Math.max(nowMillis + ceilMillis(ahead) + slackMillis, floorMillis);
        file.write(horizon);
        writes.incrementAndGet();
        lastWrittenMillis = horizon;
        long cover = nowNanos + ahead;
        if (cover - coveredUntilNanos > 0) {
            coveredUntilNanos = cover;
        }
        log.debug("Lease horizon {} written: {}", file.file(), Instant.ofEpochMilli(horizon));
    }

    /** Monotonic instant up to which leases are covered. */
    public long coveredUntilNanos() {
        return coveredUntilNanos;
    }

    /** The horizon last written successfully (epoch ms). */
    public long horizonMillis() {
        return lastWrittenMillis;
    }

    /** Durable writes since start (one at start, then one per {@code lookahead / 2}, one at close). */
    public long writes() {
        return writes.get();
    }

    public Path file() {
        return file.file();
    }

    @Override
    public Optional<String> problem() {
        IOException e = lastFailure;
        return e == null ? Optional.empty() : Optional.of("cannot write " + file.file() + ": " + e);
    }

    /**
     * Stops approving leases, stops the store thread and lowers the stored horizon to the
     * latest lease end handed out (plus slack), so that a restart after a graceful stop waits
     * only as long as needed. Call after the server has drained.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long last = approvedMax.get();
        thread.shutdown();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long nowNanos = mono.nanoTime();
        long nowMillis = wallMillis.getAsLong();
        long lastEndMillis = nowMillis + ceilMillis(last - nowNanos);
        long horizon = Math.max(lastEndMillis + slackMillis, floorMillis);
        log.info("Lease horizon {}: {} durable writes in {} s since start", file.file(), writes.get(),
                (nowNanos - previous.readNanos()) / 1_000_000_000L);
        if (horizon >= lastWrittenMillis) {
            return;
        }
        try {
            file.write(horizon);
            writes.incrementAndGet();
            lastWrittenMillis = horizon;
            log.info("Lease horizon lowered to {} (latest lease end handed out, plus {} ms slack)",
                    Instant.ofEpochMilli(horizon), slackMillis);
        } catch (IOException e) {
            log.warn("Could not lower the lease horizon {} at shutdown ({}); the next start waits up to 255 s",
                    file.file(), e.toString());
        }
    }

    private static long ceilMillis(long nanos) {
        return Math.floorDiv(nanos + 999_999, 1_000_000);
    }
}
