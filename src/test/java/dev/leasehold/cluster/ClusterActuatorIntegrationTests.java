package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.leasehold.cluster.ClusterFaultIntegrationTests.Conn;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Ports;

/**
 * The packaged wiring of cluster mode (a one-node group, so it elects itself): the {@code cluster}
 * health component, readiness, and the Raft meters on /actuator/prometheus, after a grant that
 * went through the log; and none of single-node mode's stores (token file, lease horizon,
 * recovery grace), which the log replaces.
 */
class ClusterActuatorIntegrationTests {

    @Test
    void healthReadinessAndRaftMetrics() throws Exception {
        int port = Ports.free();
        int raft = Ports.free();
        try (TestServer server = TestServer.start(Map.of("leasehold.port", String.valueOf(port),
                "leasehold.cluster.node-id", "n1",
                "leasehold.cluster.peers.n1.raft-address", "127.0.0.1:" + raft,
                "leasehold.cluster.peers.n1.client-address", "127.0.0.1:" + port,
                "management.endpoints.web.exposure.include", "health,prometheus,locks"))) {
            Actuator actuator = new Actuator(server.httpPort());
            await().atMost(Duration.ofSeconds(30)).until(() -> Boolean.TRUE.equals(
                    actuator.get("/actuator/health").json("components.cluster.details.serving")));
            Actuator.Response health = actuator.get("/actuator/health");
            assertThat(health.<String>json("components.cluster.status")).isEqualTo("UP");
            assertThat(health.<String>json("components.cluster.details.role")).isEqualTo("LEADER");
            assertThat(health.<String>json("components.cluster.details.leader")).isEqualTo("n1");
            assertThat(actuator.get("/actuator/health/readiness").status()).isEqualTo(200);

            try (Conn c = new Conn(port)) {
                c.send(ClusterFaultIntegrationTests.acquire(0, 5, 1, "k"));
                assertThat((char) c.read(5000).op()).isEqualTo('A');
            }
            Actuator.Response locks = actuator.get("/actuator/locks/k");
            assertThat(locks.<Boolean>json("serving")).as("the serving leader answers inspect").isTrue();
            assertThat(locks.<String>json("state")).isEqualTo("held");
            Actuator.Scrape scrape = actuator.scrape();
            assertThat(scrape.value("leasehold_raft_role")).isEqualTo(3.0);
            assertThat(scrape.has("leasehold_raft_leader_changes_total")).isTrue();
            assertThat(scrape.has("leasehold_raft_apply_lag_entries")).isTrue();
            assertThat(scrape.value("leasehold_raft_commit_seconds_count")).isGreaterThanOrEqualTo(1.0);
            assertThat(scrape.value("leasehold_token_high_water")).as("the grant's token").isGreaterThanOrEqualTo(1.0);

            assertThat(server.dataDir().resolve("tokens")).doesNotExist();
            assertThat(server.dataDir().resolve("lease-horizon")).doesNotExist();
            assertThat(server.dataDir().resolve("raft")).isDirectory();
            assertThat(scrape.text()).doesNotContain("leasehold_token_store_writes", "leasehold_lease_horizon");
            assertThat(health.body()).doesNotContain("recoveryGrace");
            assertThat(server.dataDir().resolve("clean-stop")).doesNotExist();
        }
    }
}
