package dev.leasehold.store;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;

/**
 * What the previous run left behind in the data directory, read once at start-up, and what it
 * means for this start's recovery grace (PROTOCOL.md section 8). A value: {@link #classify} builds
 * it from what the files held, so every case can be checked without a disk.
 *
 * @param file the lease horizon file
 * @param horizonMillis the stored horizon (epoch ms), empty when the file is missing or unreadable
 * @param unreadable why the file could not be used, or null
 * @param readMillis wall time of the read
 * @param readNanos monotonic time of the read
 */
public record PreviousRun(Path file, Kind kind, OptionalLong horizonMillis, String unreadable, long readMillis,
        long readNanos) {

    /** Why the previous run's horizon says what it says. */
    public enum Kind {
        /** The data directory held no state of a previous run: nothing to wait for. */
        FIRST_START("first start"),
        /** The previous run did not stop gracefully: wait for its last written horizon. */
        CRASH("crash horizon"),
        /** The previous run stopped gracefully and lowered its horizon to its latest lease end. */
        GRACEFUL_STOP("graceful stop"),
        /** State of a previous run, but no usable horizon (lost or corrupt file): the full 255 s. */
        MISSING_HORIZON("missing horizon");

        private final String words;

        Kind(String words) {
            this.words = words;
        }

        /** As shown in health and the start-up log. */
        public String words() {
            return words;
        }
    }

    /**
     * Tells the four cases apart: a data directory with no state is a first start; otherwise no
     * usable horizon means the full 255 s; a clean-stop marker equal to the horizon means the
     * previous run stopped gracefully (it wrote both at its stop); anything else is a crash.
     *
     * @param firstStart the data directory held no state of a previous run, read before any write
     * @param stored the horizon file's value, empty when missing or unreadable
     * @param cleanStop the clean-stop marker's value, empty when missing or unreadable
     */
    public static PreviousRun classify(Path file, boolean firstStart, OptionalLong stored, String unreadable,
            OptionalLong cleanStop, long readMillis, long readNanos) {
        Kind kind;
        if (firstStart) {
            kind = Kind.FIRST_START;
        } else if (stored.isEmpty()) {
            kind = Kind.MISSING_HORIZON;
        } else if (cleanStop.isPresent() && cleanStop.getAsLong() == stored.getAsLong()) {
            kind = Kind.GRACEFUL_STOP;
        } else {
            kind = Kind.CRASH;
        }
        return new PreviousRun(file, kind, stored, unreadable, readMillis, readNanos);
    }

    /**
     * The grace of {@code leasehold.recovery-grace: auto}: none on a first start, the full
     * 255 s without a usable horizon, otherwise {@code min(255 s, horizon − now)}, not below 0.
     */
    public Duration autoGrace() {
        return switch (kind) {
            case FIRST_START -> Duration.ZERO;
            case MISSING_HORIZON -> LeaseHorizonStore.MAX_LEASE;
            case CRASH, GRACEFUL_STOP -> Duration.ofMillis(Math.max(0,
                    Math.min(LeaseHorizonStore.MAX_LEASE.toMillis(), horizonMillis.getAsLong() - readMillis)));
        };
    }

    /** Plain-words account of the file, for the start-up log. */
    public String describe() {
        return switch (kind) {
            case FIRST_START -> "first start: " + file.getParent() + " holds no state of a previous run";
            case MISSING_HORIZON -> unreadable != null
                    ? "lease horizon " + file + " unreadable (" + unreadable + "), so the full 255 s"
                    : "no lease horizon in " + file + " but other state of a previous run, so the full 255 s";
            case CRASH, GRACEFUL_STOP -> {
                long left = horizonMillis.getAsLong() - readMillis;
                yield (kind == Kind.CRASH ? "crash horizon " : "graceful-stop horizon ")
                        + Instant.ofEpochMilli(horizonMillis.getAsLong()) + " in " + file + ", "
                        + (left > 0 ? left + " ms from now" : "already passed");
            }
        };
    }
}
