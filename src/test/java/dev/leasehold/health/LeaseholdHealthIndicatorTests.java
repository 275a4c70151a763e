package dev.leasehold.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** Status and details of both components for each server state, without sockets. */
class LeaseholdHealthIndicatorTests {

    private static LeaseholdSnapshot running() {
        return new LeaseholdSnapshot(true, 7420, 3, 2, 5, 0, false, List.of());
    }

    private static LeaseholdSnapshot with(boolean bound, long graceNanos, boolean draining, List<String> problems) {
        return new LeaseholdSnapshot(bound, bound ? 7420 : -1, 3, 2, 5, graceNanos, draining, problems);
    }

    @Test
    void upWithCounts() {
        Health h = LeaseholdHealthIndicator.health(running());
        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("port", 7420).containsEntry("sessions", 3)
                .containsEntry("heldKeys", 2).containsEntry("waiters", 5).containsEntry("draining", false)
                .doesNotContainKeys("recoveryGraceRemainingMs", "storageProblems", "error");
        assertThat(LeaseholdReadinessHealthIndicator.health(running()).getStatus()).isEqualTo(Status.UP);
    }

    @Test
    void notBoundIsDownForBoth() {
        LeaseholdSnapshot s = with(false, 0, false, List.of());
        assertThat(LeaseholdHealthIndicator.health(s).getStatus()).isEqualTo(Status.DOWN);
        assertThat(LeaseholdHealthIndicator.health(s).getDetails()).containsEntry("error", "protocol port not bound");
        assertThat(LeaseholdReadinessHealthIndicator.health(s).getStatus()).isEqualTo(Status.DOWN);
    }

    @Test
    void storageProblemIsDownWithEveryProblemListedButReadinessStaysUp() {
        LeaseholdSnapshot s = with(true, 0, false, List.of("cannot write /data/tokens: No space left on device",
                "cannot write /data/horizon: Input/output error"));
        Health h = LeaseholdHealthIndicator.health(s);
        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat(h.getDetails().get("storageProblems")).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.LIST).hasSize(2);
        assertThat(LeaseholdReadinessHealthIndicator.health(s).getStatus()).isEqualTo(Status.UP);
    }

    @Test
    void drainingIsOutOfServiceForBothAndStaysSoOnceUnbound() {
        LeaseholdSnapshot draining = with(true, 0, true, List.of());
        assertThat(LeaseholdHealthIndicator.health(draining).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
        assertThat(LeaseholdReadinessHealthIndicator.health(draining).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
        LeaseholdSnapshot stopped = with(false, 0, true, List.of());
        assertThat(LeaseholdReadinessHealthIndicator.health(stopped).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
    }

    @Test
    void storageProblemOutranksDraining() {
        LeaseholdSnapshot s = with(true, 0, true, List.of("cannot write /data/tokens: disk full"));
        assertThat(LeaseholdHealthIndicator.health(s).getStatus()).isEqualTo(Status.DOWN);
    }

    @Test
    void recoveryGraceIsUpWithTimeLeftRoundedUp() {
        LeaseholdSnapshot s = with(true, 41_000_000_001L, false, List.of());
        Health h = LeaseholdHealthIndicator.health(s);
        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails()).containsEntry("recoveryGraceRemainingMs", 41_001L);
        Health ready = LeaseholdReadinessHealthIndicator.health(s);
        assertThat(ready.getStatus()).isEqualTo(Status.UP);
        assertThat(ready.getDetails()).containsEntry("recoveryGraceRemainingMs", 41_001L);
        assertThat(LeaseholdHealthIndicator.health(with(true, 1, false, List.of())).getDetails())
                .containsEntry("recoveryGraceRemainingMs", 1L);
    }
}
