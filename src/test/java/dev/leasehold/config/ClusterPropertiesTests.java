package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** leasehold.cluster.*: off by default, and bad settings fail start-up naming the property. */
class ClusterPropertiesTests {

    private static Map<String, String> three() {
        Map<String, String> m = new HashMap<>(Map.of("leasehold.address", "0.0.0.0"));
        for (int i = 1; i <= 3; i++) {
            m.put("leasehold.cluster.peers.n" + i + ".raft-address", "10.0.0." + i + ":7430");
            m.put("leasehold.cluster.peers.n" + i + ".client-address", "10.0.0." + i + ":7420");
        }
        return m;
    }

    @Test
    void offByDefaultWithMeasuredDefaults() {
        LeaseholdProperties.Cluster c = RecoveryGraceTests.bind(Map.of()).cluster();
        assertThat(c.enabled()).isFalse();
        assertThat(c.electionTimeoutMin()).isEqualTo(Duration.ofMillis(750));
        assertThat(c.electionTimeoutMax()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.maxBatch()).isEqualTo(256);
    }

    @Test
    void aThreeNodeConfigurationBinds() {
        Map<String, String> m = three();
        m.put("leasehold.cluster.node-id", "n2");
        LeaseholdProperties.Cluster c = RecoveryGraceTests.bind(m).cluster();
        assertThat(c.enabled()).isTrue();
        assertThat(c.peers()).containsOnlyKeys("n1", "n2", "n3");
        assertThat(c.peers().get("n3").clientAddress()).isEqualTo("10.0.0.3:7420");
    }

    @Test
    void badSettingsNameTheProperty() {
        Map<String, String> m = three();
        m.put("leasehold.cluster.node-id", "n9");
        assertFails(m, "leasehold.cluster.node-id");

        Map<String, String> noId = three();
        assertFails(noId, "leasehold.cluster.node-id");

        Map<String, String> badAddress = three();
        badAddress.put("leasehold.cluster.node-id", "n1");
        badAddress.put("leasehold.cluster.peers.n2.raft-address", "10.0.0.2");
        assertFails(badAddress, "leasehold.cluster.peers.n2.raft-address");

        Map<String, String> missingClient = three();
        missingClient.put("leasehold.cluster.node-id", "n1");
        missingClient.remove("leasehold.cluster.peers.n3.client-address");
        assertFails(missingClient, "leasehold.cluster.peers.n3.client-address");

        Map<String, String> timeouts = three();
        timeouts.put("leasehold.cluster.node-id", "n1");
        timeouts.put("leasehold.cluster.election-timeout-max", "500ms");
        assertFails(timeouts, "leasehold.cluster.election-timeout-max");
    }

    @Test
    void aLoopbackBindWithAnOwnClientAddressOffLoopbackFailsNamingTheAddress() {
        Map<String, String> m = three();
        m.remove("leasehold.address"); // the default, 127.0.0.1
        m.put("leasehold.cluster.node-id", "n2");
        assertFails(m, "leasehold.address");

        Map<String, String> oneHost = new HashMap<>();
        for (int i = 1; i <= 3; i++) {
            oneHost.put("leasehold.cluster.peers.n" + i + ".raft-address", "127.0.0.1:743" + i);
            oneHost.put("leasehold.cluster.peers.n" + i + ".client-address", "localhost:742" + i);
        }
        oneHost.put("leasehold.cluster.node-id", "n2");
        assertThat(RecoveryGraceTests.bind(oneHost).address()).as("one host: loopback is right").isEqualTo("127.0.0.1");
    }

    @Test
    void raftPropertiesBindWithDotsInTheirKeys() {
        Map<String, String> m = three();
        m.put("leasehold.cluster.node-id", "n1");
        m.put("leasehold.cluster.raft-properties[raft.server.log.force.sync.num]", "16");
        m.put("leasehold.cluster.raft-properties[raft.grpc.flow.control.window]", "4MB");
        LeaseholdProperties.Cluster c = RecoveryGraceTests.bind(m).cluster();
        assertThat(c.raftProperties()).containsOnly(Map.entry("raft.server.log.force.sync.num", "16"),
                Map.entry("raft.grpc.flow.control.window", "4MB"));
        assertThat(RecoveryGraceTests.bind(Map.of()).cluster().raftProperties()).isEmpty();
    }

    @Test
    void raftPropertiesLeaseholdOwnsFailStartUpNamingTheKey() {
        for (String key : new String[] {"raft.server.storage.dir", "raft.grpc.server.port", "raft.grpc.admin.host",
                "raft.grpc.tls.conf", "raft.server.rpc.timeout.min", "raft.server.rpc.first-election.timeout.max",
                "raft.server.log.unsafe-flush.enabled", "raft.server.log.use.memory",
                "raft.server.snapshot.auto.trigger.threshold", "raft.server.log.purge.gap", "raft.server.read.option",
                "raft.rpc.type", "server.port"}) {
            Map<String, String> m = three();
            m.put("leasehold.cluster.node-id", "n1");
            m.put("leasehold.cluster.raft-properties[" + key + "]", "1");
            assertFails(m, "leasehold.cluster.raft-properties[" + key + "]");
        }
        Map<String, String> empty = three();
        empty.put("leasehold.cluster.node-id", "n1");
        empty.put("leasehold.cluster.raft-properties[raft.server.log.force.sync.num]", " ");
        assertFails(empty, "leasehold.cluster.raft-properties[raft.server.log.force.sync.num]");
    }

    private static void assertFails(Map<String, String> props, String property) {
        assertThatThrownBy(() -> RecoveryGraceTests.bind(props))
                .satisfies(e -> {
                    Throwable root = e;
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    assertThat(root.getMessage()).contains("Invalid " + property);
                });
    }
}
