package dev.leasehold.metrics;

import dev.leasehold.protocol.HoldMode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.leasehold.registry.BusyReason;
import dev.leasehold.registry.ExtendResult;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.ReleaseResult;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Counts what the {@link dev.leasehold.registry.LockRegistry} decides: Acquire outcomes, Busy
 * reasons, lease ends, Releases, Extends, queue waits and hold times; and the hand-off gaps the
 * server measures on top of the registry's decisions.
 *
 * <p>Every meter is registered in the constructor, so each series is exported (at 0) before the
 * first event, and each hook is a field read plus one Micrometer increment or record: no map
 * lookup, no tag building, no lock. The hooks run on I/O threads and the timer thread, some under
 * a lane lock. No per-key tags: a lock server's key space is unbounded.
 */
public final class RegistryEventMetrics implements RegistryObserver {

    /**
     * Queue waits are bounded by the protocol's largest wait: 255 s for {@code A} and {@code S},
     * {@code leasehold.max-wait} (at most an hour) for an {@code M}.
     */
    private static final Duration[] QUEUE_WAIT_BUCKETS = {
        Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(50),
        Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
        Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(255), Duration.ofSeconds(900),
        Duration.ofSeconds(3600) };

    /** Holds last from milliseconds to as long as the holder keeps extending. */
    private static final Duration[] HOLD_BUCKETS = {
        Duration.ofMillis(10), Duration.ofMillis(100), Duration.ofMillis(500), Duration.ofSeconds(1),
        Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofMinutes(1),
        Duration.ofMinutes(5), Duration.ofMinutes(15), Duration.ofHours(1), Duration.ofHours(6) };

    /**
     * Hand-off gaps are a few to a few hundred microseconds: fine buckets there (a Ping round
     * trip on loopback is 20-80 µs), coarse ones for a stalled event loop.
     */
    private static final Duration[] HANDOFF_BUCKETS = {
        micros(5), micros(10), micros(15), micros(20), micros(25), micros(30), micros(40), micros(50),
        micros(60), micros(80), micros(100), micros(125), micros(150), micros(200), micros(250), micros(300),
        micros(400), micros(500), micros(750), Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
        Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofSeconds(1) };

    private final Counter acquired;
    private final Counter timedOut;
    private final Counter busy;
    private final Counter[] busyByReason;
    private final Counter leaseExpirations;
    private final Timer queueWait;
    private final Timer heldUntilRelease;
    private final Timer heldUntilExpiry;
    private final Counter released;
    private final Counter releaseNotHeld;
    private final Counter extended;
    private final Counter extendNotHeld;
    private final Timer handoff;
    private final Counter checkCurrent;
    private final Counter checkNotCurrent;
    /** Shared holds (PROTOCOL.md section 13), counted apart from exclusive grants. */
    private final Counter sharedGranted;
    private final Counter limitMismatches;
    /** Queued acquires withdrawn by their session ({@code W}, PROTOCOL.md section 15). */
    private final Counter withdrawals;
    private final Timer sharedQueueWait;
    private final Timer sharedHeldUntilRelease;
    private final Timer sharedHeldUntilExpiry;

    public RegistryEventMetrics(MeterRegistry meters) {
        acquired = acquires(meters, "acquired");
        timedOut = acquires(meters, "timeout");
        busy = acquires(meters, "busy");
        BusyReason[] reasons = BusyReason.values();
        busyByReason = new Counter[reasons.length];
        for (BusyReason reason : reasons) {
            busyByReason[reason.ordinal()] = Counter.builder("leasehold.busy")
                    .description("Acquires answered B (not granted, never will be), by the limit or state that refused them")
                    .tag("reason", reason.tag())
                    .register(meters);
        }
        leaseExpirations = Counter.builder("leasehold.lease.expirations")
                .description("Grants that ended because their lease ran out rather than by Release")
                .baseUnit("expirations")
                .register(meters);
        queueWait = Timer.builder("leasehold.queue.wait")
                .description("Time from receipt of an Acquire to its grant, for Acquires that waited in a queue")
                .serviceLevelObjectives(QUEUE_WAIT_BUCKETS)
                .register(meters);
        heldUntilRelease = hold(meters, "released");
        heldUntilExpiry = hold(meters, "expired");
        released = releases(meters, "released");
        releaseNotHeld = releases(meters, "not_held");
        extended = extendsCounter(meters, "extended");
        extendNotHeld = extendsCounter(meters, "not_held");
        checkCurrent = checks(meters, "current");
        checkNotCurrent = checks(meters, "not_current");
        sharedGranted = Counter.builder("leasehold.shared.grants")
                .description("Shared grants (S answered A): read locks and semaphore permits")
                .baseUnit("grants")
                .register(meters);
        limitMismatches = Counter.builder("leasehold.shared.limit.mismatches")
                .description("S answered L: its limit was not the key's")
                .register(meters);
        withdrawals = Counter.builder("leasehold.withdrawals")
                .description("Queued acquires withdrawn by their session (W) and answered T at once; not counted as"
                        + " timeouts")
                .baseUnit("withdrawals")
                .register(meters);
        sharedQueueWait = Timer.builder("leasehold.shared.queue.wait")
                .description("Time from receipt of an S to its grant, for S that waited in a queue")
                .serviceLevelObjectives(QUEUE_WAIT_BUCKETS)
                .register(meters);
        sharedHeldUntilRelease = sharedHold(meters, "released");
        sharedHeldUntilExpiry = sharedHold(meters, "expired");
        handoff = Timer.builder("leasehold.handoff")
                .description("Hand-off gap: from reading a Release that grants a queued Acquire to that Acquire's A being"
                        + " flushed to its socket")
                .serviceLevelObjectives(HANDOFF_BUCKETS)
                .register(meters);
    }

    private static Duration micros(long n) {
        return Duration.ofNanos(n * 1000);
    }

    private static Counter acquires(MeterRegistry meters, String outcome) {
        return Counter.builder("leasehold.acquires")
                .description("Acquire answers: A (acquired), T (timeout) or B (busy)")
                .baseUnit("acquires")
                .tag("outcome", outcome)
                .register(meters);
    }

    private static Timer hold(MeterRegistry meters, String end) {
        return Timer.builder("leasehold.hold")
                .description("Time from grant to the end of the grant, by Release (released) or lease end (expired)")
                .serviceLevelObjectives(HOLD_BUCKETS)
                .tag("end", end)
                .register(meters);
    }

    private static Timer sharedHold(MeterRegistry meters, String end) {
        return Timer.builder("leasehold.shared.hold")
                .description("Time from a shared grant to its end, by Release (released) or lease end (expired)")
                .serviceLevelObjectives(HOLD_BUCKETS)
                .tag("end", end)
                .register(meters);
    }

    private static Counter releases(MeterRegistry meters, String outcome) {
        return Counter.builder("leasehold.releases")
                .description("Release answers: R (released) or N (not_held: token not the active grant)")
                .baseUnit("releases")
                .tag("outcome", outcome)
                .register(meters);
    }

    private static Counter extendsCounter(MeterRegistry meters, String outcome) {
        return Counter.builder("leasehold.extends")
                .description("Extend answers: E (extended) or N (not_held: token not the active grant)")
                .baseUnit("extends")
                .tag("outcome", outcome)
                .register(meters);
    }

    private static Counter checks(MeterRegistry meters, String outcome) {
        return Counter.builder("leasehold.checks")
                .description("Check answers: C (current: the token is the active grant) or N (not_current)")
                .baseUnit("checks")
                .tag("outcome", outcome)
                .register(meters);
    }

    @Override
    public void checked(boolean current) {
        (current ? checkCurrent : checkNotCurrent).increment();
    }

    /** Exclusive and shared grants are counted apart (the shared meters are PROTOCOL.md section 13's). */
    @Override
    public void granted(HoldMode mode, long queuedNanos, boolean fromQueue) {
        (mode.isShared() ? sharedGranted : acquired).increment();
        if (fromQueue) {
            (mode.isShared() ? sharedQueueWait : queueWait).record(queuedNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** A lease expiration is counted for exclusive grants only, as before shared holds. */
    @Override
    public void ended(HoldMode mode, long heldNanos, boolean expired) {
        if (mode.isShared()) {
            (expired ? sharedHeldUntilExpiry : sharedHeldUntilRelease).record(heldNanos, TimeUnit.NANOSECONDS);
        } else if (expired) {
            leaseExpirations.increment();
            heldUntilExpiry.record(heldNanos, TimeUnit.NANOSECONDS);
        } else {
            heldUntilRelease.record(heldNanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void withdrawn() {
        withdrawals.increment();
    }

    @Override
    public void limitMismatch() {
        limitMismatches.increment();
    }

    @Override
    public void timedOut() {
        timedOut.increment();
    }

    @Override
    public void busy(BusyReason reason) {
        busy.increment();
        busyByReason[reason.ordinal()].increment();
    }

    @Override
    public void released(ReleaseResult result) {
        (result == ReleaseResult.RELEASED ? released : releaseNotHeld).increment();
    }

    @Override
    public void extended(ExtendResult result) {
        (result != ExtendResult.NOT_HELD ? extended : extendNotHeld).increment();
    }

    @Override
    public void handedOff(long gapNanos) {
        handoff.record(gapNanos, TimeUnit.NANOSECONDS);
    }
}
