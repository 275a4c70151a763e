package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

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
        try (TestServer server = oneNodeCluster(port, Map.of(
                "management.endpoints.web.exposure.include", "health,prometheus,locks"))) {
            Actuator actuator = new Actuator(server.httpPort());
            Wait.until("the one-node cluster n1 to serve (its health's cluster details)", Duration.ofSeconds(30),
                    () -> actuator.get("/actuator/health"), r -> Boolean.TRUE.equals(r.json("components.cluster.details.serving")));
            Actuator.Response health = actuator.get("/actuator/health");
            assertThat(health.<String>json("components.cluster.status")).isEqualTo("UP");
            assertThat(health.<String>json("components.cluster.details.role")).isEqualTo("LEADER");
            assertThat(health.<String>json("components.cluster.details.leader")).isEqualTo("n1");
            assertThat(actuator.get("/actuator/health/readiness").status()).isEqualTo(200);

            try (Conn c = new Conn(port)) {
                c.send(ClusterWire.acquire(0, 5, 1, "k"));
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

    /**
     * The admin path's guard on a real management port bound to every address: the {@code cluster}
     * endpoint answers a call from loopback (the pod itself) and refuses one that reaches it through
     * another of this machine's addresses with 403 and the reason, changing nothing; health on the
     * same port is not affected.
     */
    @Test
    void clusterEndpointAnswersOnlyFromLoopback() throws Exception {
        Optional<String> outside = nonLoopbackAddress();
        Assumptions.assumeTrue(outside.isPresent(), "this machine has no non-loopback IPv4 address to call from");
        try (TestServer server = oneNodeCluster(Ports.free(), Map.of("server.address", "0.0.0.0",
                "management.endpoints.web.exposure.include", "health,cluster"))) {
            Actuator inside = new Actuator(server.httpPort());
            Actuator remote = new Actuator(outside.get(), server.httpPort());
            Wait.until("n1 to be its cluster's leader (/actuator/cluster)", Duration.ofSeconds(30),
                    () -> inside.get("/actuator/cluster"), r -> "n1".equals(r.json("leader")));

            Actuator.Response refused = remote.get("/actuator/cluster");
            assertThat(refused.status()).as(refused.body()).isEqualTo(403);
            assertThat(refused.body()).contains("only from the node itself").contains(outside.get())
                    .contains("kubectl exec");
            int free = Ports.free();
            Actuator.Response add = remote.post("/actuator/cluster/add", "{\"id\":\"n2\",\"raftAddress\":\"127.0.0.1:"
                    + free + "\",\"clientAddress\":\"127.0.0.1:" + Ports.free() + "\"}");
            assertThat(add.status()).as(add.body()).isEqualTo(403);
            assertThat(remote.get("/actuator/health").status()).as("health is not guarded").isEqualTo(200);

            Actuator.Response members = inside.get("/actuator/cluster");
            assertThat(members.status()).as(members.body()).isEqualTo(200);
            assertThat(members.<java.util.List<?>>json("members")).as("nothing was changed").hasSize(1);
        }
    }

    /** A one-node group on {@code port} (it elects itself), with {@code extra} properties. */
    private static TestServer oneNodeCluster(int port, Map<String, String> extra) {
        Map<String, String> props = new java.util.HashMap<>(extra);
        props.put("leasehold.port", String.valueOf(port));
        props.put("leasehold.cluster.node-id", "n1");
        props.put("leasehold.cluster.peers.n1.raft-address", "127.0.0.1:" + Ports.free());
        props.put("leasehold.cluster.peers.n1.client-address", "127.0.0.1:" + port);
        return TestServer.start(props);
    }

    private static Optional<String> nonLoopbackAddress() throws Exception {
        for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!ni.isUp() || ni.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(ni.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    return Optional.of(a.getHostAddress());
                }
            }
        }
        return Optional.empty();
    }
}
