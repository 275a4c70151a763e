package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.store.ReservedTokens;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

/**
 * Tokens never go back when a single node's data directory becomes a cluster member: a single
 * node issues tokens past 1,000,000 (its first run is killed, so its second run starts above the
 * first run's reserved block; a graceful stop would give the block back) and stops; a cluster node on that directory refuses to start until
 * {@code leasehold.cluster.initial-token} is at least the single node's high-water mark, naming
 * the setting and the value; with it set on all three nodes (two of them on empty directories),
 * the cluster's first token is above it. Real processes throughout.
 */
class TokenFloorIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void aClusterOnASingleNodesDataDirectoryIssuesTokensAboveIt() throws Exception {
        Path single = dir.resolve("n1");
        long firstRun = grantOnce(single, false);
        long secondRun = grantOnce(single, true); // after a crash the rest of the reserved block is skipped
        assertThat(secondRun).as("the single node's tokens went past 1,000,000").isGreaterThan(1_000_000);
        long highWater = ReservedTokens.previousHighWater(single);
        assertThat(highWater).isGreaterThanOrEqualTo(secondRun);
        System.out.printf("single node: tokens %d then %d, high-water mark %d%n", firstRun, secondRun, highWater);

        int[] client = new int[3];
        int[] raft = new int[3];
        for (int i = 0; i < 3; i++) {
            client[i] = Ports.free();
            raft[i] = Ports.free();
        }

        // Without the setting, the node on the old directory refuses, and says what to set.
        try (ServerProcess refused = ServerProcess.launch(single, nodeProps(0, client, raft, 0))) {
            assertThat(refused.awaitExit(60_000)).as("start-up fails").isNotNull().isNotZero();
            assertThat(refused.output()).contains("leasehold.cluster.initial-token",
                    "set leasehold.cluster.initial-token to at least " + highWater);
        }

        List<ServerProcess> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                Path data = i == 0 ? single : dir.resolve("n" + (i + 1));
                nodes.add(ServerProcess.start(data, nodeProps(i, client, raft, highWater)));
            }
            long first = firstClusterToken(client, 120_000);
            System.out.printf("cluster on it: first token %d (initial-token %d)%n", first, highWater);
            assertThat(first).as("the cluster's first token is above the single node's").isGreaterThan(highWater);
        } finally {
            nodes.forEach(ServerProcess::close);
        }
    }

    /** One grant from a single node on {@code data}, then a {@code kill -9} or a graceful stop. */
    private static long grantOnce(Path data, boolean graceful) throws Exception {
        try (ServerProcess p = ServerProcess.start(data, Map.of("leasehold.recovery-grace", "0s"));
                Conn c = new Conn(p.port())) {
            c.send(ClusterWire.acquire(0, 5, 1, "floor"));
            Answer a = c.read(10_000);
            assertThat((char) a.op()).isEqualTo('A');
            c.send(ClusterWire.release(a.token(), "floor"));
            assertThat((char) c.read(10_000).op()).isEqualTo('R');
            if (graceful) {
                assertThat(p.terminate(30_000)).as("a graceful stop (SIGTERM)").isNotNull();
            } else {
                p.kill9();
            }
            return a.token();
        }
    }

    /** The token of the first grant any node makes, trying each in turn until one serves. */
    private static long firstClusterToken(int[] client, long timeoutMs) throws Exception {
        long[] owner = {1};
        // No node serves yet: an election takes real time, poll again.
        return Wait.until("a grant from any node of the cluster (client ports " + java.util.Arrays.toString(client) + ")",
                Duration.ofMillis(timeoutMs), Duration.ofMillis(100), () -> {
                    StringBuilder seen = new StringBuilder();
                    for (int i = 0; i < client.length; i++) {
                        try (Conn c = new Conn(client[i])) {
                            c.send(ClusterWire.acquire(0, 5, owner[0]++, "floor"));
                            Answer a = c.read(5_000);
                            if (a.op() == 'A') {
                                return new Wait.Seen<>(a.token(), "n" + (i + 1) + " granted");
                            }
                            seen.append('n').append(i + 1).append(" answered ").append(a).append("; ");
                        } catch (IOException e) {
                            seen.append('n').append(i + 1).append(' ').append(e).append("; "); // not up yet, or not the leader
                        }
                    }
                    return Wait.Seen.<Long>nothing(seen.toString());
                }, Wait.Seen::found).value();
    }

    private static Map<String, String> nodeProps(int i, int[] client, int[] raft, long initialToken) {
        Map<String, String> p = ServerProcess.props("leasehold.port", String.valueOf(client[i]),
                "leasehold.cluster.node-id", "n" + (i + 1),
                "leasehold.cluster.initial-token", String.valueOf(initialToken));
        for (int j = 0; j < 3; j++) {
            p.put("leasehold.cluster.peers.n" + (j + 1) + ".raft-address", "127.0.0.1:" + raft[j]);
            p.put("leasehold.cluster.peers.n" + (j + 1) + ".client-address", "127.0.0.1:" + client[j]);
        }
        return p;
    }

}
