package dev.leasehold.store;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.testing.FailingDisk;
import dev.leasehold.testing.ManualClocks;

/** The lease horizon: what it stores, when it writes, what it covers, and what a restart reads. */
class LeaseHorizonStoreTests {

    static final long S = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path dir;
    final ManualClocks clocks = new ManualClocks();
    final FailingDisk disk = new FailingDisk();

    LeaseHorizonStore open() throws IOException {
        return LeaseHorizonStore.open(disk.open(dir.resolve("lease-horizon"), "lease-horizon"),
                LeaseHorizonStore.Settings.DEFAULTS, clocks, clocks.wall(), false);
    }

    long stored() throws IOException {
        return new DurableLong(dir.resolve("lease-horizon"), "lease-horizon").read().getAsLong();
    }

    @Test
    void firstStartHasNoHorizonSoAutoMeansTheFull255Seconds() throws IOException {
        try (LeaseHorizonStore store = open()) {
            assertThat(store.previous().horizonMillis()).isEmpty();
            assertThat(store.previous().autoGrace()).isEqualTo(Duration.ofSeconds(255));
            assertThat(store.previous().describe()).contains("no lease horizon").contains(dir.toString());
            // Written before open() returns: now + 255 s + 120 s lookahead + 5 s slack.
            assertThat(store.writes()).isEqualTo(1);
            assertThat(stored()).isEqualTo(clocks.wallMillis() + 380_000);
        }
    }

    @Test
    void coversEveryLeaseThatCanBeGrantedWithoutWaitingForTheDisk() throws IOException {
        try (LeaseHorizonStore store = open()) {
            long now = clocks.nanoTime();
            assertThat(store.covers(now + 255 * S)).isTrue();
            assertThat(store.covers(now + 375 * S)).isTrue();
            assertThat(store.covers(now + 375 * S + 1)).isFalse();
            // 59 s later nothing is due; a 255 s lease is still covered.
            clocks.advance(59, SECONDS);
            store.maintain();
            assertThat(store.writes()).isEqualTo(1);
            assertThat(store.covers(clocks.nanoTime() + 255 * S)).isTrue();
            // Once less than 255 s + 60 s remains, it is rewritten: one write a minute.
            clocks.advance(2, SECONDS);
            store.maintain();
            assertThat(store.writes()).isEqualTo(2);
            assertThat(stored()).isEqualTo(clocks.wallMillis() + 380_000);
            for (int minute = 0; minute < 10; minute++) {
                for (int s = 0; s < 60; s++) {
                    clocks.advance(1, SECONDS);
                    store.maintain();
                    assertThat(store.covers(clocks.nanoTime() + 255 * S)).isTrue();
                }
            }
            // Checked once a second, so a rewrite every 61 s: 9 more in these 600 s.
            assertThat(store.writes()).isEqualTo(11);
        }
    }

    @Test
    void restartReadsTheHorizonAndGraceIsWhatRemainsOfItAtMost255Seconds() throws IOException {
        try (LeaseHorizonStore first = open()) {
            assertThat(first.writes()).isEqualTo(1);
        } // close() lowers it to "no lease handed out": now + 5 s slack
        clocks.advance(2, SECONDS);
        try (LeaseHorizonStore second = open()) {
            assertThat(second.previous().autoGrace()).isEqualTo(Duration.ofSeconds(3));
            assertThat(second.previous().describe()).contains("3000 ms from now");
        }
        clocks.advance(10, SECONDS);
        try (LeaseHorizonStore third = open()) {
            assertThat(third.previous().autoGrace()).isZero();
            assertThat(third.previous().describe()).contains("already passed");
        }
    }

    @Test
    void afterACrashTheGraceIsTheFull255SecondsUnlessTheServerWasDownLonger() throws IOException {
        LeaseHorizonStore crashed = open();
        crashed.covers(clocks.nanoTime() + 10 * S);
        // kill -9: close() never runs; the stored horizon is still now + 380 s.
        clocks.advance(30, SECONDS);
        try (LeaseHorizonStore restarted = open()) {
            assertThat(restarted.previous().autoGrace()).isEqualTo(Duration.ofSeconds(255));
        }
        Files.delete(dir.resolve("lease-horizon"));
        LeaseHorizonStore crashedAgain = open();
        clocks.advance(200, SECONDS); // down 200 s: 380 - 200 = 180 s left
        try (LeaseHorizonStore restarted = open()) {
            assertThat(restarted.previous().autoGrace()).isEqualTo(Duration.ofSeconds(180));
        }
        crashed.close();
        crashedAgain.close();
    }

    @Test
    void gracefulCloseLowersTheHorizonToTheLatestLeaseEndPlusSlack() throws IOException {
        LeaseHorizonStore store = open();
        long now = clocks.nanoTime();
        assertThat(store.covers(now + 30 * S)).isTrue();
        assertThat(store.covers(now + 12 * S)).isTrue();
        clocks.advance(10, SECONDS);
        store.close();
        assertThat(store.covers(clocks.nanoTime() + 1)).as("no lease after close").isFalse();
        // The 30 s lease ends 20 s from now; + 5 s slack.
        assertThat(stored()).isEqualTo(clocks.wallMillis() + 25_000);
        try (LeaseHorizonStore next = open()) {
            assertThat(next.previous().autoGrace()).isEqualTo(Duration.ofSeconds(25));
        }
    }

    @Test
    void neverWritesBelowThePreviousRunsHorizonSoStoppingDuringTheGraceKeepsIt() throws IOException {
        open(); // crashed run: horizon = now + 380 s
        long crashedHorizon = stored();
        clocks.advance(1, SECONDS);
        LeaseHorizonStore restarted = open();
        // Its grace (255 s) has not ended; it stops at once, having granted nothing.
        restarted.close();
        // Capped at 255 s + slack after the restart's read: any lease of the crashed run ends by then.
        assertThat(stored()).isEqualTo(clocks.wallMillis() + 260_000).isLessThan(crashedHorizon);
        try (LeaseHorizonStore next = open()) {
            assertThat(next.previous().autoGrace()).isEqualTo(Duration.ofSeconds(255));
        }
    }

    @Test
    void aWallClockStepWithinTheSlackIsAbsorbedBeyondItIsTheDocumentedRisk() throws IOException {
        LeaseHorizonStore store = open();
        store.covers(clocks.nanoTime() + 20 * S);
        store.close(); // horizon = lease end + 5 s
        // Down 1 s, and the wall clock steps 4 s forward: still waits past the lease end.
        clocks.advance(1, SECONDS);
        clocks.stepWall(4_000);
        try (LeaseHorizonStore next = open()) {
            Duration grace = next.previous().autoGrace();
            assertThat(grace).isEqualTo(Duration.ofSeconds(20));
            assertThat(grace.toNanos()).as("covers the 19 s the lease still runs").isGreaterThanOrEqualTo(19 * S);
        }
    }

    @Test
    void corruptOrUnreadableHorizonMeansTheFull255SecondsAndIsReplaced() throws IOException {
        Files.writeString(dir.resolve("lease-horizon"), "garbage\n");
        try (LeaseHorizonStore store = open()) {
            assertThat(store.previous().unreadable()).contains(dir.resolve("lease-horizon").toString());
            assertThat(store.previous().autoGrace()).isEqualTo(Duration.ofSeconds(255));
            assertThat(store.previous().describe()).contains("unreadable");
            assertThat(stored()).isEqualTo(clocks.wallMillis() + 380_000);
        }
    }

    @Test
    void aFailingDiskIsReportedAtOnceLeasesAlreadyOnDiskStayGrantableAndItRecoversByItself() throws IOException {
        try (LeaseHorizonStore store = open()) {
            disk.failing.set(true);
            clocks.advance(61, SECONDS);
            store.maintain();
            assertThat(store.problem()).hasValueSatisfying(p -> assertThat(p)
                    .contains(dir.resolve("lease-horizon").toString()).contains("No space left on device"));
            // 375 - 61 = 314 s still on disk: a 255 s lease is fine, it is recorded.
            assertThat(store.covers(clocks.nanoTime() + 255 * S)).isTrue();
            // Retried every check; when coverage runs short, longer leases are refused...
            clocks.advance(100, SECONDS);
            store.maintain();
            assertThat(store.covers(clocks.nanoTime() + 255 * S)).isFalse();
            assertThat(store.covers(clocks.nanoTime() + 10 * S)).as("short leases still covered").isTrue();
            assertThat(disk.failedWrites.get()).isEqualTo(2);
            // ...until the disk is back: the next check rewrites it.
            disk.failing.set(false);
            clocks.advance(1, SECONDS);
            store.maintain();
            assertThat(store.problem()).isEmpty();
            assertThat(store.covers(clocks.nanoTime() + 255 * S)).isTrue();
        }
    }

    @Test
    void theStoreThreadKeepsTheHorizonAheadOnItsOwn() throws Exception {
        LeaseHorizonStore.Settings fast = new LeaseHorizonStore.Settings(Duration.ofMillis(200), Duration.ofMillis(5),
                Duration.ofMillis(10));
        // Real clocks: 255 s + 200 ms ahead, rewritten every ~100 ms.
        try (LeaseHorizonStore store = LeaseHorizonStore.open(disk.open(dir.resolve("lease-horizon"), "lease-horizon"),
                fast, System::nanoTime, System::currentTimeMillis, true)) {
            Thread.sleep(550); // real time: the store's own thread on real clocks is what is tested
            assertThat(store.writes()).isBetween(4L, 8L);
            assertThat(store.covers(System.nanoTime() + 255 * S)).isTrue();
        }
        MILLISECONDS.sleep(1);
    }
}
