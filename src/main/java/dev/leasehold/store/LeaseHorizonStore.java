package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.NanoClock;

/**
 * The lease horizon of PROTOCOL.md section 8: a wall-clock instant, kept fsync'd in
 * {@code <data-dir>/lease-horizon}, after which no lease this run has answered can still be
 * running. After a crash the next run reads it and holds every key until it has passed, so no
 * key gets a second holder while a lease of the crashed run may still be in use.
 *
 * <h2>Following the leases in use</h2>
 * The horizon is written only as far ahead as the leases actually granted need: the longest
 * lease granted or extended in the last 10 minutes (the <em>reach</em>) plus the look-ahead
 * (default 10 s, the slack included). A service using 2 s leases therefore has a stored horizon
 * at most about 12 s ahead, and a {@code kill -9} costs at most about that much grace, not 255 s.
 * Under steady load the store thread rewrites the horizon shortly before coverage would run
 * short, once per {@code lookahead − slack} (about every 8 s by default), so grants of leases no
 * longer than the reach never wait. A lease longer than anything the horizon covers (the first
 * 255 s lease of the day, or the first grant after an idle spell) is granted in memory at once,
 * and its answer waits for one horizon write on this store's thread
 * ({@link LeaseHorizon.Approval#AFTER_WRITE}); event loops never wait.
 *
 * <h2>Monotonic to wall time</h2>
 * Leases are measured on the monotonic clock; the file holds wall-clock milliseconds. At each
 * write the two clocks are sampled together: the write covers monotonic instants up to
 * {@code sample + reach + lookahead − slack} and records wall time {@code sample + reach + lookahead}.
 * The slack absorbs the wall clock stepping forward between runs (NTP correcting a clock that
 * was behind): if it steps forward by more than the slack across a restart, the next grace comes
 * out too short by the difference. Users who cannot rule that out set
 * {@code leasehold.recovery-grace: 255s}, which ignores this file.
 *
 * <h2>Never promising less than was approved</h2>
 * When the reach shrinks (long leases stopped 10 minutes ago) the horizon is lowered. That write
 * first lowers the in-memory coverage and only then reads the highest approved lease end, while
 * {@link #approve} raises that end first and then reads the coverage: with volatile (sequentially
 * consistent) accesses one of them sees the other, so no approved lease end is left above the
 * written horizon.
 *
 * <h2>Shutdown</h2>
 * {@link #close()} (after the drain) stops approving leases and lowers the horizon to the latest
 * end of the leases still held (answered, not released, not expired; see {@link #heldLeases}),
 * plus the slack, or to now when none is held, and writes a clean-stop marker so that the next
 * start can say its grace follows a graceful stop. It never goes below the previous run's
 * horizon (capped at 255 s after start).
 *
 * <h2>Failures</h2>
 * A failed write is reported by {@link #problem()} at once and retried every second. Answers
 * waiting for that write are refused (the registry sends {@code B} or {@code N}); leases already
 * covered by the last successful write stay grantable. The store recovers by itself when the disk does.
 *
 * <h2>Parts</h2>
 * This class decides when to write and what: the coverage, the approved lease ends, the value at
 * a stop. {@link LeasesInUse} keeps the reach, {@link WaitingAnswers} the answers that wait for a
 * write, {@link StoreThread} is the thread that every write after {@link #open} and before
 * {@link #close()} runs on, and {@link HorizonFiles} reads and writes the two files ({@link PreviousRun}
 * is what they held at start-up).
 */
public final class LeaseHorizonStore implements LeaseHorizon, StorageStatus, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseHorizonStore.class);

    /** The longest lease the protocol allows (lease is a u8 of seconds). */
    public static final Duration MAX_LEASE = Duration.ofSeconds(255);
    /** How long a lease length counts as "in use" after its last grant or Extend (PROTOCOL.md 8). */
    public static final Duration LEASE_WINDOW = Duration.ofMinutes(10);
    static final long RETRY_AFTER_FAILURE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * @param lookahead how far beyond the longest lease in use the horizon is written, slack
     *        included: the most a crash's grace exceeds that lease by. The horizon is rewritten
     *        about once per {@code lookahead − slack} under steady load.
     * @param slack tolerated forward step of the wall clock across a restart (part of the lookahead)
     * @param checkPeriod how often the store thread checks whether the horizon needs a write
     */
    public record Settings(Duration lookahead, Duration slack, Duration checkPeriod) {
        /** Default of {@code leasehold.recovery-lookahead}, in seconds. */
        public static final int DEFAULT_LOOKAHEAD_SECONDS = 10;
        /** Default of {@code leasehold.recovery-clock-slack}, in seconds. */
        public static final int DEFAULT_SLACK_SECONDS = 2;
        /** The server's defaults: what {@code LeaseholdProperties} binds when neither setting is set. */
        public static final Settings DEFAULTS = new Settings(Duration.ofSeconds(DEFAULT_LOOKAHEAD_SECONDS),
                Duration.ofSeconds(DEFAULT_SLACK_SECONDS), Duration.ofMillis(250));

        public Settings {
            // Built from the parameters: in a compact constructor the fields are not assigned yet.
            String values = "lookahead=" + lookahead + ", slack=" + slack + ", checkPeriod=" + checkPeriod;
            if (lookahead == null || slack == null || checkPeriod == null) {
                throw new IllegalArgumentException("lease horizon settings need all three values: " + values);
            }
            if (slack.isNegative() || lookahead.compareTo(slack) <= 0 || lookahead.compareTo(MAX_LEASE) > 0) {
                throw new IllegalArgumentException(
                        "lease horizon lookahead must be more than the clock slack and at most 255s: " + values);
            }
            if (checkPeriod.isNegative() || checkPeriod.isZero()
                    || checkPeriod.compareTo(lookahead.minus(slack).dividedBy(2)) >= 0) {
                throw new IllegalArgumentException(
                        "lease horizon check period must be more than 0 and less than (lookahead - slack) / 2: "
                                + values);
            }
        }
    }

    private final HorizonFiles files;
    private final NanoClock mono;
    private final LongSupplier wallMillis;
    /** Coverage beyond the reach that each write adds: lookahead − slack. */
    private final long aheadNanos;
    private final long slackMillis;
    private final long checkNanos;
    private final PreviousRun previous;
    /** The previous run's horizon, capped at 255 s + slack after start: never written below. */
    private final long floorMillis;

    /** Monotonic instant up to which lease ends are on disk. Written by one thread at a time. */
    private volatile long coveredUntilNanos;
    /** Latest lease end approved by {@link #approve}; raised before the coverage is read. */
    private final AtomicLong approvedMax;
    private final LeasesInUse inUse = new LeasesInUse();
    private final WaitingAnswers waiting = new WaitingAnswers();
    private volatile boolean closed;
    /** The leases still held, asked at {@link #close()}; null: every lease answered may still be held. */
    private volatile Supplier<OptionalLong> heldLeases;
    private long nextRetryNanos;
    private final AtomicLong deferredAnswers = new AtomicLong();
    private volatile IOException lastFailure;
    /** Runs {@link #maintain()}; not started in tests that call it themselves. */
    private final StoreThread thread = new StoreThread("leasehold-horizon-store", this::maintain);

    private LeaseHorizonStore(HorizonFiles files, Settings settings, NanoClock mono, LongSupplier wallMillis,
            PreviousRun previous) {
        this.files = files;
        this.mono = mono;
        this.wallMillis = wallMillis;
        this.aheadNanos = settings.lookahead().minus(settings.slack()).toNanos();
        this.slackMillis = settings.slack().toMillis();
        this.checkNanos = settings.checkPeriod().toNanos();
        this.previous = previous;
        long cap = previous.readMillis() + MAX_LEASE.toMillis() + slackMillis;
        this.floorMillis = Math.min(previous.horizonMillis().orElse(Long.MIN_VALUE), cap);
        this.coveredUntilNanos = previous.readNanos();
        this.approvedMax = new AtomicLong(previous.readNanos());
    }

    /** Opens {@code <dataDir>/lease-horizon} (and its clean-stop marker) with the system clocks. */
    public static LeaseHorizonStore open(Path dataDir, DurableFiles files, Settings settings, boolean firstStart)
            throws IOException {
        return open(files.open(dataDir.resolve("lease-horizon"), "lease-horizon"),
                files.open(dataDir.resolve("clean-stop"), "clean-stop"), settings, NanoClock.SYSTEM,
                System::currentTimeMillis, firstStart, true);
    }

    /**
     * Reads what the previous run left (an unreadable file is reported, not fatal: the grace
     * then lasts the full 255 s), then durably writes a horizon covering the lookahead before
     * returning, so that even a run that crashes at once leaves a usable horizon behind.
     *
     * @param firstStart the data directory held no state of a previous run (see
     *        {@link DataDirectory#holdsState(Path)}); read before any file was written
     * @param startThread false for tests that drive {@link #maintain()} themselves
     * @throws IOException if the first write fails: the data directory cannot be written
     */
    public static LeaseHorizonStore open(DurableValue file, DurableValue cleanStop, Settings settings, NanoClock mono,
            LongSupplier wallMillis, boolean firstStart, boolean startThread) throws IOException {
        HorizonFiles files = new HorizonFiles(file, cleanStop);
        PreviousRun previous = files.readPreviousRun(firstStart, wallMillis, mono);
        LeaseHorizonStore store = new LeaseHorizonStore(files, settings, mono, wallMillis, previous);
        store.write(mono.nanoTime());
        if (startThread) {
            store.thread.start(store.checkNanos);
        }
        return store;
    }

    public PreviousRun previous() {
        return previous;
    }

    @Override
    public Approval approve(long nowNanos, long leaseEndNanos) {
        inUse.note(nowNanos, leaseEndNanos);
        raise(approvedMax, leaseEndNanos); // first: see "Never promising less than was approved"
        boolean onDisk = leaseEndNanos - coveredUntilNanos <= 0;
        // Read after publishing the end: close() sets the flag, then reads approvedMax, so
        // either it sees this end or this call sees the flag.
        if (closed) {
            return Approval.REFUSED;
        }
        if (onDisk) {
            return Approval.ON_DISK;
        }
        if (lastFailure != null) {
            return Approval.REFUSED;
        }
        deferredAnswers.incrementAndGet();
        thread.wake();
        return Approval.AFTER_WRITE;
    }

    @Override
    public void whenDurable(Durable then) {
        long target = approvedMax.get();
        if (target - coveredUntilNanos <= 0 && waiting.idle()) {
            then.then(true); // nothing queued or running that it could overtake
            return;
        }
        if (closed) {
            then.then(false); // stopped: nothing more is written, nothing may wait for ever
            return;
        }
        waiting.add(target, then);
        if (closed) {
            waiting.refuseAll(); // close() may have emptied the queue just before this add
            return;
        }
        thread.wake(); // the store thread runs it after its next write (or at once, if that write just finished)
    }

    /** The longest lease granted or extended within {@link #LEASE_WINDOW}, 0 if none. */
    long reachNanos(long nowNanos) {
        return inUse.reachNanos(nowNanos);
    }

    /**
     * Writes the horizon when an answer waits for it, when coverage is about to run short under
     * load, when the reach has shrunk (to lower it), or to retry a failed write; then runs the
     * answers that the coverage now allows. Runs on the store thread.
     */
    void maintain() {
        thread.woken();
        if (closed) {
            return;
        }
        long now = mono.nanoTime();
        long covered = coveredUntilNanos;
        long reach = inUse.reachNanos(now);
        long early = checkNanos + 2 * files.lastWriteTookNanos();
        boolean demanded = approvedMax.get() - covered > 0 || !waiting.isEmpty();
        boolean runningShort = covered - now < reach + early
                && inUse.activeWithin(now, aheadNanos + 2 * SECOND_NANOS);
        boolean tooHigh = covered - now > reach + aheadNanos + SECOND_NANOS;
        boolean retry = lastFailure != null && now - nextRetryNanos >= 0;
        boolean write = lastFailure == null ? demanded || runningShort || tooHigh : retry;
        if (write) {
            try {
                write(now);
                if (lastFailure != null) {
                    LOG.info("Lease horizon {} is writable again", files.file());
                }
                lastFailure = null;
            } catch (IOException | RuntimeException e) {
                if (lastFailure == null) {
                    LOG.warn("Cannot write the lease horizon {} ({}); grants continue only while the last written"
                            + " horizon covers their lease, retrying every second", files.file(), e.toString());
                }
                lastFailure = e instanceof IOException io ? io : new IOException(e);
                nextRetryNanos = now + RETRY_AFTER_FAILURE_NANOS;
                waiting.refuseAll();
                return;
            }
        }
        if (waiting.runCovered(coveredUntilNanos)) {
            thread.wake(); // approved after this write began: one more write
        }
    }

    /** Durably writes a horizon covering the reach and every approved lease end, plus the lookahead. */
    private void write(long now) throws IOException {
        long target = now + inUse.reachNanos(now) + aheadNanos;
        if (target - coveredUntilNanos < 0) {
            coveredUntilNanos = target; // lower in memory first: see "Never promising less than was approved"
        }
        long approved = approvedMax.get();
        if (approved - target > 0) {
            target = approved + aheadNanos;
        }
        long nowMillis = wallMillis.getAsLong();
        long horizon = Math.max(nowMillis + ceilMillis(target - now) + slackMillis, floorMillis);
        files.write(horizon);
        coveredUntilNanos = target;
        LOG.debug("Lease horizon {} written: {}", files.file(), Instant.ofEpochMilli(horizon));
    }

    /** Monotonic instant up to which leases are covered. */
    public long coveredUntilNanos() {
        return coveredUntilNanos;
    }

    /** The horizon last written successfully (epoch ms). */
    public long horizonMillis() {
        return files.lastWrittenMillis();
    }

    /** Durable writes of the horizon since start (one at start, then as leases need them, one at close). */
    public long writes() {
        return files.writes();
    }

    /** Grants and Extends since start whose answer had to wait for a horizon write. */
    public long deferredAnswers() {
        return deferredAnswers.get();
    }

    public Path file() {
        return files.file();
    }

    @Override
    public Optional<String> problem() {
        IOException e = lastFailure;
        return e == null ? Optional.empty() : Optional.of("cannot write " + files.file() + ": " + e);
    }

    /**
     * Where {@link #close()} asks for the latest end of the leases still held (monotonic nanos,
     * empty when none): a graceful stop then protects only those, so a stop with no lock held
     * leaves no grace, and a lease released before the stop costs none.
     */
    public void heldLeases(Supplier<OptionalLong> latestHeldEnd) {
        this.heldLeases = latestHeldEnd;
    }

    /**
     * Stops approving leases, stops the store thread and lowers the stored horizon to the
     * latest end of the leases still held (plus slack; now if none is), then marks the stop as
     * clean, so that a restart after a graceful stop waits only as long as needed. Call after the
     * server has drained. Answers still waiting for a write are refused (B or N): their sessions
     * are closed by now.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long last = approvedMax.get();
        thread.stop();
        waiting.refuseAll(); // their sessions are closed by now (drain); nothing may wait for ever
        long nowNanos = mono.nanoTime();
        long nowMillis = wallMillis.getAsLong();
        long covered = coveredUntilNanos;
        long answered = last - covered > 0 ? covered : last; // an end above coverage was never answered
        Supplier<OptionalLong> held = heldLeases;
        OptionalLong stillHeld = held == null ? OptionalLong.of(answered) : held.get();
        // Nothing held: nothing to protect, so no slack either (the slack covers a clock step under a lease).
        long horizon = stillHeld.isEmpty() ? Math.max(nowMillis, floorMillis)
                : Math.max(nowMillis + ceilMillis(earlier(answered, stillHeld.getAsLong()) - nowNanos) + slackMillis,
                        floorMillis);
        LOG.info("Lease horizon {}: {} durable writes in {} s since start, {} answers waited for one",
                files.file(), files.writes(), (nowNanos - previous.readNanos()) / 1_000_000_000L, deferredAnswers.get());
        try {
            if (horizon < files.lastWrittenMillis()) {
                files.write(horizon);
                if (stillHeld.isEmpty()) {
                    LOG.info("Lease horizon lowered to {} (no lease held at the stop: the next start has no grace)",
                            Instant.ofEpochMilli(horizon));
                } else {
                    LOG.info("Lease horizon lowered to {} (latest end of the leases still held, plus {} ms slack)",
                            Instant.ofEpochMilli(horizon), slackMillis);
                }
            }
            files.markCleanStop();
        } catch (IOException e) {
            LOG.warn("Could not lower the lease horizon {} at shutdown ({}); the next start waits for the last"
                    + " written horizon", files.file(), e.toString());
        }
    }

    private static void raise(AtomicLong max, long value) {
        long cur;
        while ((cur = max.get()) - value < 0 && !max.compareAndSet(cur, value)) {
            // retry: another lane raised it meanwhile
        }
    }

    /** The earlier of two monotonic instants (wrap-safe). */
    private static long earlier(long a, long b) {
        return a - b < 0 ? a : b;
    }

    private static long ceilMillis(long nanos) {
        return Math.floorDiv(nanos + 999_999, 1_000_000);
    }
}
