package dev.leasehold.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.registry.AcquireResult;
import dev.leasehold.registry.BusyReason;
import dev.leasehold.registry.ExtendResult;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.ReleaseResult;
import dev.leasehold.registry.SessionHandle;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The observer against a real registry on a manual clock: each decision moves exactly its meter. */
class RegistryEventMetricsTests {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private final AtomicLong tokens = new AtomicLong();
    private SimpleMeterRegistry meters;
    private LockRegistry registry;

    @BeforeEach
    void setUp() {
        meters = new SimpleMeterRegistry();
        registry = new LockRegistry(new RegistryLimits(1, 100, 100, 2), now::get, tokens::incrementAndGet,
                LeaseHorizon.UNBOUNDED, w -> { }, new RegistryEventMetrics(meters));
    }

    @Test
    void everySeriesExistsAtZeroBeforeTheFirstEvent() {
        assertThat(count("leasehold.acquires", "outcome", "acquired")).isZero();
        assertThat(count("leasehold.acquires", "outcome", "timeout")).isZero();
        assertThat(count("leasehold.acquires", "outcome", "busy")).isZero();
        for (BusyReason reason : BusyReason.values()) {
            assertThat(count("leasehold.busy", "reason", reason.tag())).isZero();
        }
        assertThat(meters.get("leasehold.lease.expirations").counter().count()).isZero();
        assertThat(meters.get("leasehold.queue.wait").timer().count()).isZero();
        assertThat(meters.get("leasehold.hold").tag("end", "released").timer().count()).isZero();
        assertThat(meters.get("leasehold.hold").tag("end", "expired").timer().count()).isZero();
        assertThat(count("leasehold.releases", "outcome", "released")).isZero();
        assertThat(count("leasehold.releases", "outcome", "not_held")).isZero();
        assertThat(count("leasehold.extends", "outcome", "extended")).isZero();
        assertThat(count("leasehold.extends", "outcome", "not_held")).isZero();
        assertThat(meters.get("leasehold.withdrawals").counter().count()).isZero();
        for (Meter m : meters.getMeters()) {
            if (m.getId().getName().endsWith(".histogram")) {
                continue; // SimpleMeterRegistry's own per-bucket gauges for the SLO buckets
            }
            assertThat(m.getId().getDescription()).as(m.getId().getName()).isNotBlank();
            assertThat(m.getId().getTags()).as("no per-key tags on " + m.getId())
                    .noneMatch(t -> t.getKey().equals("key"));
        }
    }

    @Test
    void sharedGrantsAreCountedApartFromExclusiveOnes() {
        SessionHandle session = new SessionHandle();
        long r = granted(registry.acquire(key("s"), HoldMode.ofLimit(0), 0, 30, 1, now.get(), session));
        granted(registry.acquire(key("s"), HoldMode.ofLimit(0), 0, 30, 2, now.get(), session));
        assertThat(registry.acquire(key("s"), HoldMode.ofLimit(2), 0, 30, 3, now.get(), session))
                .isEqualTo(new AcquireResult.LimitMismatch(0));
        assertThat(meters.get("leasehold.shared.grants").counter().count()).isEqualTo(2);
        assertThat(meters.get("leasehold.shared.limit.mismatches").counter().count()).isEqualTo(1);
        assertThat(count("leasehold.acquires", "outcome", "acquired")).as("exclusive grants only").isZero();
        now.addAndGet(SECOND);
        registry.release(key("s"), r);
        assertThat(meters.get("leasehold.shared.hold").tag("end", "released").timer().totalTime(TimeUnit.SECONDS))
                .isEqualTo(1.0);
        assertThat(meters.get("leasehold.hold").tag("end", "released").timer().count()).isZero();
        now.addAndGet(30 * SECOND);
        registry.advance();
        assertThat(meters.get("leasehold.shared.hold").tag("end", "expired").timer().count()).isEqualTo(1);
        assertThat(meters.get("leasehold.lease.expirations").counter().count()).as("exclusive expiries only").isZero();
    }

    /** A withdrawn acquire's T is a withdrawal, not a timeout (PROTOCOL.md section 15). */
    @Test
    void aWithdrawalIsCountedApartFromTimeouts() {
        SessionHandle session = new SessionHandle();
        granted(registry.acquire(key("w"), HoldMode.EXCLUSIVE, 0, 30, 1, now.get(), session));
        assertThat(registry.acquire(key("w"), HoldMode.EXCLUSIVE, 200, 30, 2, now.get(), session))
                .isInstanceOf(AcquireResult.Queued.class);
        assertThat(registry.withdraw(key("w"), 2, new SessionHandle())).as("another session's").isZero();
        assertThat(registry.withdraw(key("w"), 2, session)).isEqualTo(1);
        assertThat(meters.get("leasehold.withdrawals").counter().count()).isEqualTo(1);
        assertThat(count("leasehold.acquires", "outcome", "timeout")).isZero();
    }

    @Test
    void immediateGrantTimeoutAndRelease() {
        long token = granted(registry.acquire(key("a"), HoldMode.EXCLUSIVE, 0, 30, 1, now.get(), new SessionHandle()));
        assertThat(registry.acquire(key("a"), HoldMode.EXCLUSIVE, 0, 30, 2, now.get(), new SessionHandle()))
                .isInstanceOf(AcquireResult.TimedOut.class);
        now.addAndGet(3 * SECOND);
        assertThat(registry.release(key("a"), token)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(registry.release(key("a"), token)).isEqualTo(ReleaseResult.NOT_HELD);
        assertThat(registry.release(key("never"), 99)).isEqualTo(ReleaseResult.NOT_HELD);

        assertThat(count("leasehold.acquires", "outcome", "acquired")).isEqualTo(1);
        assertThat(count("leasehold.acquires", "outcome", "timeout")).isEqualTo(1);
        assertThat(meters.get("leasehold.queue.wait").timer().count()).as("immediate grants did not queue").isZero();
        var hold = meters.get("leasehold.hold").tag("end", "released").timer();
        assertThat(hold.count()).isEqualTo(1);
        assertThat(hold.totalTime(TimeUnit.SECONDS)).isEqualTo(3.0);
        assertThat(count("leasehold.releases", "outcome", "released")).isEqualTo(1);
        assertThat(count("leasehold.releases", "outcome", "not_held")).isEqualTo(2);
        assertThat(meters.get("leasehold.lease.expirations").counter().count()).isZero();
    }

    @Test
    void queuedGrantRecordsItsWaitAndAFullQueueCountsBusy() {
        long first = granted(registry.acquire(key("q"), HoldMode.EXCLUSIVE, 0, 30, 1, now.get(), new SessionHandle()));
        assertThat(registry.acquire(key("q"), HoldMode.EXCLUSIVE, 10_000, 30, 2, now.get(), new SessionHandle()))
                .isInstanceOf(AcquireResult.Queued.class);
        assertThat(registry.acquire(key("q"), HoldMode.EXCLUSIVE, 10_000, 30, 3, now.get(), new SessionHandle()))
                .isEqualTo(new AcquireResult.Busy(BusyReason.KEY_QUEUE));
        now.addAndGet(2 * SECOND);
        registry.release(key("q"), first);

        var wait = meters.get("leasehold.queue.wait").timer();
        assertThat(wait.count()).isEqualTo(1);
        assertThat(wait.totalTime(TimeUnit.SECONDS)).isEqualTo(2.0);
        assertThat(count("leasehold.acquires", "outcome", "acquired")).isEqualTo(2);
        assertThat(count("leasehold.acquires", "outcome", "busy")).isEqualTo(1);
        assertThat(count("leasehold.busy", "reason", "key_queue")).isEqualTo(1);
        assertThat(count("leasehold.busy", "reason", "held_keys")).isZero();
    }

    @Test
    void heldKeysLimitAndDrainingCountTheirReasons() {
        granted(registry.acquire(key("h1"), HoldMode.EXCLUSIVE, 0, 30, 1, now.get(), new SessionHandle()));
        granted(registry.acquire(key("h2"), HoldMode.EXCLUSIVE, 0, 30, 2, now.get(), new SessionHandle()));
        registry.acquire(key("h3"), HoldMode.EXCLUSIVE, 0, 30, 3, now.get(), new SessionHandle());
        registry.acquire(key("h1"), HoldMode.EXCLUSIVE, 10_000, 30, 4, now.get(), new SessionHandle()); // queued, drained below
        registry.drain();
        registry.acquire(key("h4"), HoldMode.EXCLUSIVE, 0, 30, 5, now.get(), new SessionHandle());

        assertThat(count("leasehold.busy", "reason", "held_keys")).isEqualTo(1);
        assertThat(count("leasehold.busy", "reason", "draining")).isEqualTo(2);
        assertThat(count("leasehold.acquires", "outcome", "busy")).isEqualTo(3);
    }

    @Test
    void leaseThatRunsOutIsAnExpirationHeldForTheWholeLease() {
        granted(registry.acquire(key("x"), HoldMode.EXCLUSIVE, 0, 5, 1, now.get(), new SessionHandle()));
        assertThat(registry.acquire(key("x"), HoldMode.EXCLUSIVE, 1_000, 30, 2, now.get(), new SessionHandle()))
                .isInstanceOf(AcquireResult.Queued.class);
        now.addAndGet(2 * SECOND);
        registry.advance(); // the waiter's 1 s wait has run out: T from the queue
        now.addAndGet(4 * SECOND);
        registry.advance(); // the 5 s lease has run out

        assertThat(meters.get("leasehold.lease.expirations").counter().count()).isEqualTo(1);
        var hold = meters.get("leasehold.hold").tag("end", "expired").timer();
        assertThat(hold.count()).isEqualTo(1);
        assertThat(hold.totalTime(TimeUnit.SECONDS)).isEqualTo(5.0);
        assertThat(meters.get("leasehold.hold").tag("end", "released").timer().count()).isZero();
        assertThat(count("leasehold.acquires", "outcome", "timeout")).isEqualTo(1);
    }

    @Test
    void extendOutcomes() {
        long token = granted(registry.acquire(key("e"), HoldMode.EXCLUSIVE, 0, 30, 1, now.get(), new SessionHandle()));
        assertThat(registry.extend(key("e"), token, 60)).isEqualTo(ExtendResult.EXTENDED);
        assertThat(registry.extend(key("e"), token + 1, 60)).isEqualTo(ExtendResult.NOT_HELD);
        assertThat(registry.extend(key("nope"), 7, 60)).isEqualTo(ExtendResult.NOT_HELD);

        assertThat(count("leasehold.extends", "outcome", "extended")).isEqualTo(1);
        assertThat(count("leasehold.extends", "outcome", "not_held")).isEqualTo(2);
    }

    private double count(String name, String tag, String value) {
        return meters.get(name).tag(tag, value).counter().count();
    }

    private static long granted(AcquireResult r) {
        assertThat(r).isInstanceOf(AcquireResult.Granted.class);
        return ((AcquireResult.Granted) r).token();
    }

    private static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }
}
