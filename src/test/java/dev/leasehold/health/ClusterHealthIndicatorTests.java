package dev.leasehold.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.cluster.Formation;

/** The cluster health component for each state a node reports, including a division still starting. */
class ClusterHealthIndicatorTests {

    private static ClusterNode.Status status(String role, String leader, Formation.Storage storage) {
        return new ClusterNode.Status("n2", role, false, 3, leader, 10, 10, 1, 0, 0, storage);
    }

    @Test
    void aStartingDivisionIsOutOfServiceWithTheReasonEvenWhenALeaderIsKnown() {
        Health h = ClusterHealthIndicator.health(status("STARTING", "n1", Formation.Storage.FORMED));
        assertThat(h.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
        assertThat(h.getDetails()).containsEntry("role", "STARTING")
                .containsEntry("reason", "the Raft division is starting: no role yet");
    }

    @Test
    void aRemovedNodeIsDownWithWhyAndIsNeverReadyEvenWithALeaderKnown() {
        ClusterNode.Status s = new ClusterNode.Status("n2", "FOLLOWER", false, 3, "n1", 10, 10, 1, 0, 0,
                Formation.Storage.FORMED, "the committed configuration [n1, n3] leaves it out");
        Health h = ClusterHealthIndicator.health(s);
        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) h.getDetails().get("reason")).startsWith("removed from the cluster: not a member")
                .contains("[n1, n3] leaves it out");
        assertThat(s.ready()).isFalse();
    }

    @Test
    void anUnreadableDivisionIsOutOfService() {
        Health h = ClusterHealthIndicator.health(status("UNKNOWN", "n1", Formation.Storage.FORMED));
        assertThat(h.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
        assertThat((String) h.getDetails().get("reason")).contains("could not be read");
    }

    @Test
    void stoppedOrRefusedIsDownAFollowerWithALeaderIsUpAndNoLeaderIsOutOfService() {
        assertThat(ClusterHealthIndicator.health(status("STOPPED", "", Formation.Storage.FORMED)).getStatus())
                .isEqualTo(Status.DOWN);
        assertThat(ClusterHealthIndicator.health(status("NO_STORAGE", "", Formation.Storage.REFUSED)).getStatus())
                .isEqualTo(Status.DOWN);
        assertThat(ClusterHealthIndicator.health(status("FOLLOWER", "n1", Formation.Storage.FORMED)).getStatus())
                .isEqualTo(Status.UP);
        Health noLeader = ClusterHealthIndicator.health(status("CANDIDATE", "", Formation.Storage.FORMED));
        assertThat(noLeader.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
        assertThat(noLeader.getDetails()).doesNotContainKey("reason");
    }
}
