package dev.leasehold.store;

import java.time.Duration;

/**
 * The recovery grace this start applies (PROTOCOL.md section 8), decided once before anything
 * is served: how long, and why, in the words health and the start-up log show.
 *
 * @param grace how long no key is granted, counted from when the horizon was read
 * @param reason {@code first start}, {@code crash horizon}, {@code graceful stop},
 *        {@code missing horizon} (from the data directory, with {@code auto}), {@code configured}
 *        (a fixed {@code leasehold.recovery-grace}) or {@code off}
 * @param detail what the data directory said, for the log
 */
public record RecoveryPlan(Duration grace, String reason, String detail) {

    /** Applies {@code setting} to what the previous run left behind. */
    public static RecoveryPlan of(RecoveryGrace setting, PreviousRun previous) {
        if (setting.isOff()) {
            return new RecoveryPlan(Duration.ZERO, "off", "leasehold.recovery-grace=0s");
        }
        if (!setting.isAuto()) {
            return new RecoveryPlan(setting.fixed(), "configured",
                    "leasehold.recovery-grace=" + setting + "; " + previous.describe());
        }
        return new RecoveryPlan(previous.autoGrace(), previous.kind().words(), "auto: " + previous.describe());
    }
}
