package dev.leasehold.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;

import org.junit.jupiter.api.Test;

import dev.leasehold.store.PreviousRun.Kind;

/** The reading of the previous run (PROTOCOL.md section 8) on values: no disk, no clock. */
class PreviousRunTests {

    private static final Path FILE = Path.of("/data/lease-horizon");
    private static final long NOW_MILLIS = 1_800_000_000_000L;

    private static PreviousRun read(boolean firstStart, OptionalLong stored, OptionalLong cleanStop) {
        return PreviousRun.classify(FILE, firstStart, stored, null, cleanStop, NOW_MILLIS, 42);
    }

    @Test
    void aDataDirectoryWithNoStateIsAFirstStartWhateverTheFilesSay() {
        PreviousRun p = read(true, OptionalLong.of(NOW_MILLIS + 9_000), OptionalLong.empty());
        assertThat(p.kind()).isEqualTo(Kind.FIRST_START);
        assertThat(p.autoGrace()).isZero();
        assertThat(p.describe()).startsWith("first start: /data holds no state");
    }

    @Test
    void stateButNoUsableHorizonWaitsTheLongestLease() {
        PreviousRun p = read(false, OptionalLong.empty(), OptionalLong.of(5));
        assertThat(p.kind()).isEqualTo(Kind.MISSING_HORIZON);
        assertThat(p.autoGrace()).isEqualTo(Duration.ofSeconds(255));
        PreviousRun unreadable = PreviousRun.classify(FILE, false, OptionalLong.empty(), "bad checksum",
                OptionalLong.empty(), NOW_MILLIS, 42);
        assertThat(unreadable.describe()).contains("unreadable (bad checksum)", "full 255 s");
    }

    @Test
    void aCleanStopMarkerEqualToTheHorizonIsAGracefulStop() {
        PreviousRun p = read(false, OptionalLong.of(NOW_MILLIS + 3_000), OptionalLong.of(NOW_MILLIS + 3_000));
        assertThat(p.kind()).isEqualTo(Kind.GRACEFUL_STOP);
        assertThat(p.autoGrace()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void anyOtherMarkerIsACrashAndTheGraceIsTheHorizonLeftCappedAndNeverNegative() {
        assertThat(read(false, OptionalLong.of(NOW_MILLIS + 7_000), OptionalLong.of(0)).kind()).isEqualTo(Kind.CRASH);
        assertThat(read(false, OptionalLong.of(NOW_MILLIS + 7_000), OptionalLong.empty()).autoGrace())
                .isEqualTo(Duration.ofSeconds(7));
        assertThat(read(false, OptionalLong.of(NOW_MILLIS + 900_000), OptionalLong.empty()).autoGrace())
                .as("capped at the longest lease").isEqualTo(Duration.ofSeconds(255));
        PreviousRun passed = read(false, OptionalLong.of(NOW_MILLIS - 1_000), OptionalLong.empty());
        assertThat(passed.autoGrace()).isZero();
        assertThat(passed.describe()).startsWith("crash horizon ").endsWith("already passed");
    }
}
