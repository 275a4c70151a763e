package dev.leasehold.store;

import static dev.leasehold.registry.LeaseHorizon.Approval.AFTER_WRITE;
import static dev.leasehold.registry.LeaseHorizon.Approval.ON_DISK;
import static dev.leasehold.registry.LeaseHorizon.Approval.REFUSED;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.store.PreviousRun.Kind;
import dev.leasehold.testing.FailingDisk;
import dev.leasehold.testing.ManualClocks;

/**
 * The lease horizon: what it stores, when it writes, what it covers, and what a restart reads.
 * Defaults: lookahead 10 s of which 2 s slack, so each write covers the reach + 8 s of monotonic
 * time and stores the reach + 10 s of wall time.
 */
class LeaseHorizonStoreTests {

    static final long S = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path dir;
    final ManualClocks clocks = new ManualClocks();
    final FailingDisk disk = new FailingDisk();

    LeaseHorizonStore open() throws IOException {
        return open(false);
    }

    LeaseHorizonStore open(boolean firstStart) throws IOException {
        return LeaseHorizonStore.open(disk.open(dir.resolve("lease-horizon"), "lease-horizon"),
                disk.open(dir.resolve("clean-stop"), "clean-stop"), LeaseHorizonStore.Settings.DEFAULTS, clocks,
                clocks.wall(), firstStart, false);
    }

    long stored() throws IOException {
        return new DurableLong(dir.resolve("lease-horizon"), "lease-horizon").read().getAsLong();
    }

    /** Steady load: a lease of {@code leaseSeconds} granted every 100 ms for {@code seconds}, checks every 250 ms. */
    void steadyLoad(LeaseHorizonStore store, int leaseSeconds, int seconds, List<LeaseHorizon.Approval> seen) {
        for (int ms = 0; ms < seconds * 1000; ms += 50) {
            clocks.advance(50, MILLISECONDS);
            if (ms % 100 == 0) {
                long now = clocks.nanoTime();
                seen.add(store.approve(now, now + leaseSeconds * S));
            }
            if (ms % 250 == 0) {
                store.maintain();
            }
        }
    }

    @Test
    void aFirstStartHasNoGraceAndLeavesAHorizonForTheNextStart() throws IOException {
        try (LeaseHorizonStore store = open(true)) {
            assertThat(store.previous().kind()).isEqualTo(Kind.FIRST_START);
            assertThat(store.previous().autoGrace()).isZero();
            assertThat(store.previous().describe()).contains("first start").contains("no state of a previous run");
            // Written before open() returns: now + lookahead (8 s covered + 2 s slack).
            assertThat(store.writes()).isEqualTo(1);
            assertThat(stored()).isEqualTo(clocks.wallMillis() + 10_000);
        }
    }

    @Test
    void stateWithoutAHorizonMeansTheFull255Seconds() throws IOException {
        try (LeaseHorizonStore store = open(false)) {
            assertThat(store.previous().kind()).isEqualTo(Kind.MISSING_HORIZON);
            assertThat(store.previous().autoGrace()).isEqualTo(Duration.ofSeconds(255));
            assertThat(store.previous().describe()).contains("no lease horizon").contains(dir.toString());
        }
    }

    @Test
    void underSteadyLoadShortLeasesNeverWaitAndTheHorizonIsRewrittenAboutEvery8Seconds() throws IOException {
        try (LeaseHorizonStore store = open(true)) {
            List<LeaseHorizon.Approval> seen = new ArrayList<>();
            steadyLoad(store, 2, 600, seen);
            assertThat(seen).hasSize(6000).containsOnly(ON_DISK);
            // 600 s / (8 s covered - 2 s lease + the 2 s lease itself - the 0.25 s early margin) ~ 77.
            assertThat(store.writes()).isBetween(70L, 85L);
            long ahead = stored() - clocks.wallMillis();
            assertThat(ahead).as("stored horizon ahead of now").isBetween(2_000L + 2_000, 12_000L);
        }
    }

    @Test
    void aCrashCostsTheLongestLeaseInUsePlusTheLookaheadNot255Seconds() throws IOException {
        for (int lease : new int[] {2, 30, 255}) {
            LeaseHorizonStore crashed = open(true);
            List<LeaseHorizon.Approval> seen = new ArrayList<>();
            steadyLoad(crashed, lease, 60, seen);
            assertThat(seen.subList(1, seen.size())).as("lease %d s", lease).containsOnly(ON_DISK);
            // kill -9: close() never runs.
            clocks.advance(1, SECONDS);
            try (LeaseHorizonStore restarted = open()) {
                assertThat(restarted.previous().kind()).isEqualTo(Kind.CRASH);
                Duration grace = restarted.previous().autoGrace();
                assertThat(grace).as("grace after a crash with %d s leases", lease)
                        .isGreaterThanOrEqualTo(Duration.ofSeconds(lease - 1))
                        .isLessThanOrEqualTo(Duration.ofSeconds(Math.min(255, lease + 10)));
                assertThat(restarted.previous().describe()).contains("crash horizon");
            }
            crashed.close();
            Files.delete(dir.resolve("lease-horizon"));
            Files.deleteIfExists(dir.resolve("clean-stop"));
        }
    }

    @Test
    void aLeaseLongerThanTheCoverageIsAnsweredOnlyAfterTheWriteThatCoversIt() throws IOException {
        try (LeaseHorizonStore store = open(true)) {
            long now = clocks.nanoTime();
            assertThat(store.approve(now, now + 5 * S)).isEqualTo(ON_DISK);
            assertThat(store.approve(now, now + 60 * S)).isEqualTo(AFTER_WRITE);
            List<Boolean> answered = new ArrayList<>();
            store.whenDurable(answered::add);
            assertThat(answered).as("not before the write").isEmpty();
            store.maintain();
            assertThat(answered).containsExactly(true);
            assertThat(store.deferredAnswers()).isEqualTo(1);
            assertThat(stored()).isGreaterThanOrEqualTo(clocks.wallMillis() + 60_000 + 2_000);
            // Now 60 s is in use: a second one goes out at once.
            assertThat(store.approve(now, now + 60 * S)).isEqualTo(ON_DISK);
            List<Boolean> again = new ArrayList<>();
            store.whenDurable(again::add);
            assertThat(again).as("already on disk: at once").containsExactly(true);
        }
    }

    @Test
    void theReachShrinksTenMinutesAfterTheLastLongLeaseAndTheHorizonIsLowered() throws IOException {
        try (LeaseHorizonStore store = open(true)) {
            long now = clocks.nanoTime();
            store.approve(now, now + 200 * S);
            store.maintain();
            assertThat(stored() - clocks.wallMillis()).isGreaterThanOrEqualTo(202_000);
            List<LeaseHorizon.Approval> seen = new ArrayList<>();
            steadyLoad(store, 2, 590, seen);
            assertThat(store.reachNanos(clocks.nanoTime())).isEqualTo(200 * S);
            steadyLoad(store, 2, 15, seen);
            assertThat(store.reachNanos(clocks.nanoTime())).isEqualTo(2 * S);
            assertThat(seen).containsOnly(ON_DISK);
            assertThat(stored() - clocks.wallMillis()).as("lowered to 2 s + lookahead").isLessThanOrEqualTo(12_000);
        }
    }

    @Test
    void gracefulCloseLowersTheHorizonToTheLatestLeaseEndAndSaysSo() throws IOException {
        LeaseHorizonStore store = open(true);
        long now = clocks.nanoTime();
        assertThat(store.approve(now, now + 30 * S)).isEqualTo(AFTER_WRITE);
        store.whenDurable(onDisk -> { });
        store.maintain();
        clocks.advance(10, SECONDS);
        store.close();
        assertThat(store.approve(clocks.nanoTime(), clocks.nanoTime() + S)).as("no lease after close")
                .isEqualTo(REFUSED);
        // The 30 s lease ends 20 s from now; + 2 s slack.
        assertThat(stored()).isEqualTo(clocks.wallMillis() + 22_000);
        LeaseHorizonStore next = open();
        assertThat(next.previous().kind()).isEqualTo(Kind.GRACEFUL_STOP);
        assertThat(next.previous().autoGrace()).isEqualTo(Duration.ofSeconds(22));
        assertThat(next.previous().describe()).contains("graceful-stop horizon");
        // That run crashes: the next start must not take it for a graceful stop.
        clocks.advance(1, SECONDS);
        try (LeaseHorizonStore afterCrash = open()) {
            assertThat(afterCrash.previous().kind()).isEqualTo(Kind.CRASH);
            assertThat(afterCrash.previous().autoGrace()).isEqualTo(Duration.ofSeconds(21));
        }
        next.close();
    }

    @Test
    void aGracefulStopWithNoLeaseHeldLeavesNoGraceEvenAfterALongLeaseWasReleased() throws IOException {
        LeaseHorizonStore store = open(true);
        store.heldLeases(OptionalLong::empty); // the registry: its only lock (30 s) was released
        long now = clocks.nanoTime();
        store.approve(now, now + 30 * S);
        store.maintain();
        clocks.advance(2, SECONDS);
        store.close();
        assertThat(stored()).as("lowered to now: nothing to protect").isEqualTo(clocks.wallMillis());
        clocks.advance(1, SECONDS);
        try (LeaseHorizonStore next = open()) {
            assertThat(next.previous().kind()).isEqualTo(Kind.GRACEFUL_STOP);
            assertThat(next.previous().autoGrace()).isZero();
        }
    }

    @Test
    void aGracefulStopProtectsOnlyTheLeasesStillHeld() throws IOException {
        LeaseHorizonStore store = open(true);
        long now = clocks.nanoTime();
        store.approve(now, now + 60 * S); // released later
        store.approve(now, now + 20 * S); // still held at the stop
        store.heldLeases(() -> OptionalLong.of(now + 20 * S));
        store.maintain();
        clocks.advance(5, SECONDS);
        store.close();
        // The held 20 s lease ends 15 s from now; + 2 s slack. The released 60 s one costs nothing.
        assertThat(stored()).isEqualTo(clocks.wallMillis() + 17_000);
    }

    @Test
    void neverWritesBelowThePreviousRunsHorizonSoStoppingDuringTheGraceKeepsIt() throws IOException {
        LeaseHorizonStore crashed = open(true);
        long now = clocks.nanoTime();
        crashed.approve(now, now + 100 * S);
        crashed.maintain();
        long crashedHorizon = stored();
        clocks.advance(1, SECONDS);
        LeaseHorizonStore restarted = open();
        assertThat(restarted.previous().autoGrace()).isEqualTo(Duration.ofMillis(crashedHorizon - clocks.wallMillis()));
        // Its grace has not ended; it stops at once, having granted nothing: the horizon stays.
        restarted.close();
        assertThat(stored()).isEqualTo(crashedHorizon);
        try (LeaseHorizonStore next = open()) {
            assertThat(next.previous().autoGrace()).isEqualTo(Duration.ofMillis(crashedHorizon - clocks.wallMillis()));
        }
        crashed.close();
    }

    @Test
    void aWallClockStepWithinTheSlackIsAbsorbedBeyondItIsTheDocumentedRisk() throws IOException {
        LeaseHorizonStore store = open(true);
        long now = clocks.nanoTime();
        store.approve(now, now + 20 * S);
        store.maintain();
        store.close(); // horizon = lease end + 2 s
        // Down 1 s, and the wall clock steps 1.5 s forward: still waits past the lease end.
        clocks.advance(1, SECONDS);
        clocks.stepWall(1_500);
        try (LeaseHorizonStore next = open()) {
            Duration grace = next.previous().autoGrace();
            assertThat(grace).isEqualTo(Duration.ofMillis(19_500));
            assertThat(grace.toNanos()).as("covers the 19 s the lease still runs").isGreaterThanOrEqualTo(19 * S);
        }
    }

    @Test
    void corruptOrUnreadableHorizonMeansTheFull255SecondsAndIsReplaced() throws IOException {
        Files.writeString(dir.resolve("lease-horizon"), "garbage\n");
        try (LeaseHorizonStore store = open()) {
            assertThat(store.previous().unreadable()).contains(dir.resolve("lease-horizon").toString());
            assertThat(store.previous().kind()).isEqualTo(Kind.MISSING_HORIZON);
            assertThat(store.previous().autoGrace()).isEqualTo(Duration.ofSeconds(255));
            assertThat(store.previous().describe()).contains("unreadable");
            assertThat(stored()).isEqualTo(clocks.wallMillis() + 10_000);
        }
    }

    @Test
    void aFailingDiskRefusesWhatIsNotOnDiskKeepsWhatIsAndRecoversByItself() throws IOException {
        try (LeaseHorizonStore store = open(true)) {
            long now = clocks.nanoTime();
            disk.failing.set(true);
            assertThat(store.approve(now, now + 30 * S)).isEqualTo(AFTER_WRITE);
            List<Boolean> answered = new ArrayList<>();
            store.whenDurable(answered::add);
            store.maintain();
            assertThat(answered).as("the write it waited for failed").containsExactly(false);
            assertThat(store.problem()).hasValueSatisfying(p -> assertThat(p)
                    .contains(dir.resolve("lease-horizon").toString()).contains("No space left on device"));
            // What the last write covers stays grantable; more is refused while the disk fails.
            assertThat(store.approve(now, now + 5 * S)).isEqualTo(ON_DISK);
            assertThat(store.approve(now, now + 9 * S)).isEqualTo(REFUSED);
            // Retried once a second, with or without traffic, until the disk is back.
            clocks.advance(1, SECONDS);
            store.maintain();
            assertThat(disk.failedWrites.get()).isEqualTo(2);
            disk.failing.set(false);
            clocks.advance(1, SECONDS);
            store.maintain();
            assertThat(store.problem()).isEmpty();
            long later = clocks.nanoTime();
            assertThat(store.approve(later, later + 30 * S)).as("30 s is in use: covered by the retry")
                    .isEqualTo(ON_DISK);
        }
    }

    @Test
    void theStoreThreadAnswersAWaitingLeaseOnItsOwn() throws Exception {
        try (LeaseHorizonStore store = LeaseHorizonStore.open(disk.open(dir.resolve("lease-horizon"), "lease-horizon"),
                disk.open(dir.resolve("clean-stop"), "clean-stop"), LeaseHorizonStore.Settings.DEFAULTS,
                System::nanoTime, System::currentTimeMillis, true, true)) {
            long now = System.nanoTime();
            assertThat(store.approve(now, now + 100 * S)).isEqualTo(AFTER_WRITE);
            CountDownLatch answered = new CountDownLatch(1);
            store.whenDurable(onDisk -> answered.countDown());
            assertThat(answered.await(10, SECONDS)).as("answered after the store thread's write").isTrue();
            assertThat(store.writes()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void invalidSettingsNameTheirValues() {
        assertThatThrownBy(() -> new LeaseHorizonStore.Settings(Duration.ofSeconds(2), Duration.ofSeconds(5),
                Duration.ofMillis(250))).hasMessageContaining("lookahead=PT2S, slack=PT5S, checkPeriod=PT0.25S");
        assertThatThrownBy(() -> new LeaseHorizonStore.Settings(Duration.ofSeconds(10), Duration.ofSeconds(2),
                Duration.ofSeconds(5))).hasMessageContaining("check period").hasMessageContaining("checkPeriod=PT5S");
    }
}
