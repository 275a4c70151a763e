package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

/**
 * Upgrades (docs/cluster.md "Upgrading"): a committed log entry in a format this build does not
 * know, as a newer build's leader would write it, stops every node that applies it (the fatal
 * hook, which halts the process in production) instead of being skipped or misapplied. The
 * entry is written through a plain Raft client, as the newer build's proposer would.
 */
class LogFormatIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void anEntryOfAnUnknownFormatStopsTheNodeInsteadOfBeingMisapplied() throws Exception {
        int[] ports = {Ports.free(), Ports.free(), Ports.free()};
        String[] addresses = InProcessCluster.loopback(ports);
        try (InProcessCluster cluster = InProcessCluster.start(dir, ports, addresses, Duration.ofMillis(750),
                Duration.ofMillis(1500))) {
            int leader = cluster.awaitServingLeader(-1);
            long appliedBefore = cluster.node(leader).status().appliedIndex();
            assertThat(cluster.logFailed()).isFalse();
            byte[] newer = {(byte) (CommandCodec.VALUE_VERSION + 1), 1, 2, 3}; // the next format byte a newer build would use
            try (RaftClient c = RaftClient.newBuilder().setProperties(new RaftProperties())
                    .setRaftGroup(cluster.raftGroup()).setClientId(ClientId.randomId())
                    .setLeaderId(cluster.raftGroup().getPeers().stream()
                            .filter(p -> p.getId().toString().equals("n" + leader)).findFirst().orElseThrow().getId())
                    .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5,
                            TimeDuration.valueOf(200, TimeUnit.MILLISECONDS))).build()) {
                c.async().send(Message.valueOf(UnsafeByteOperations.unsafeWrap(newer)));
                Wait.until("a node to fail on the newer log entry format (failed?)", Duration.ofSeconds(30), cluster::logFailed,
                        failed -> failed);
            }
            assertThat(cluster.node(leader).status().appliedIndex()).isGreaterThanOrEqualTo(appliedBefore);
            assertThat(cluster.node(leader).status().replicatedHeldKeys()).as("nothing of it reached the table").isZero();
        }
    }
}
