package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.support.Seeds;
import dev.leasehold.testing.ServerProcess;

/**
 * Disk loss (docs/cluster.md "When a disk is lost"): three real server processes form a new
 * cluster on empty directories, grant under load; a follower is killed, its data directory wiped,
 * and it is restarted. It must refuse to vote or serve (it logs why, health says
 * {@code storage: REFUSED}). Then the leader is killed: the one node left cannot be elected
 * without the wiped node's vote, so nothing is granted until the old leader is back; then tokens
 * continue above every token seen, and the history has no overlap and no token twice.
 */
@FaultRun
class DiskLossIntegrationTests {

    private static final long SEED = Seeds.seed("DiskLossIntegrationTests");

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;

    @Test
    void aWipedNodeRefusesToVoteAndTheClusterLosesNoGrantOrToken() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        ClusterHistory history = new ClusterHistory();
        ClusterLoad load = new ClusterLoad(ClusterWire.loopback(cluster.clientPorts), history, 1);
        try {
            for (int i = 0; i < 3; i++) {
                cluster.launch(i, nodeProps(i));
            }
            for (int i = 0; i < 3; i++) {
                // "first formation of the cluster", or, for a founder whose JVM came up after the
                // other two had formed (a loaded machine), "joins the formed cluster": both format.
                awaitLog(i, "Raft storage formatted in", 120_000);
            }
            assertThat(load.leader(60_000)).as("a new cluster forms on empty directories").isNotNegative();
            load.start(4, SEED);
            assertThat(history.awaitMoreGrants(50, 60_000)).as("grants on the new cluster").isTrue();

            // The wiped node must be on the roster to be refused (and every node must hold the log
            // before the leader is killed below).
            cluster.awaitEveryMemberStored(120_000);
            int leader = load.leader(30_000);
            int wiped = (leader + 1) % 3;
            int other = (leader + 2) % 3;
            cluster.nodes[wiped].kill9();
            deleteTree(dir.resolve(cluster.ids[wiped]).resolve("raft"));
            restart(wiped);
            awaitLog(wiped, "REFUSES to vote or serve", 60_000);
            System.out.println("DiskLossIntegrationTests: " + cluster.ids[wiped] + " refused: " + line(wiped, "REFUSES"));
            // It still names the leader in its X 8 (as its formation probes saw it), so clients move on.
            try (ClusterWire.Conn c = new ClusterWire.Conn(cluster.clientPorts[wiped])) {
                c.send(ClusterWire.acquire(0, 5, 1, "wiped/probe"));
                assertThat(c.read(5_000).toString()).as("the refusing node's answer to an Acquire")
                        .isIn("X 8 leader=127.0.0.1:" + cluster.clientPorts[leader],
                                "X 8 leader=127.0.0.1:" + cluster.clientPorts[other]);
            }
            assertThat(history.awaitMoreGrants(50, 60_000)).as("grants from the two remaining members").isTrue();
            long maxBefore = history.maxToken();
            int grantsBefore = history.tickets();
            assertThat(grantsBefore).as("grants before the leader is killed").isPositive();

            // The leader dies: the other member alone is no majority, and the wiped node gives no vote.
            cluster.nodes[leader].kill9();
            long downAt = System.nanoTime();
            Thread.sleep(6000); // real time: several election timeouts pass, and no node may be elected in them
            assertThat(load.leader(500)).as("no node may serve without the wiped node's vote").isNegative();
            assertThat(cluster.nodes[other].output()).as(cluster.ids[other] + " is never elected with the wiped node's vote")
                    .doesNotContain("serves as leader (term");
            restart(leader);
            int back = load.leader(60_000);
            assertThat(back).isIn(leader, other);
            System.out.printf("DiskLossIntegrationTests: leader back after %d ms (n%d)%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downAt), back + 1);
            assertThat(history.awaitMoreGrants(50, 60_000)).as("grants after the leader is back").isTrue();
            load.stop();

            assertThat(cluster.nodes[wiped].isAlive()).as("the refusing node stays up (health DOWN, storage REFUSED)").isTrue();
            assertThat(cluster.nodes[wiped].output()).doesNotContain("serves as leader").doesNotContain("Raft storage formatted");
            assertThat(Formation.hasStorage(dir.resolve(cluster.ids[wiped]).resolve("raft"),
                    ClusterNode.GROUP_ID.getUuid().toString())).as("nothing formatted").isFalse();
            assertThat(history.maxToken()).as("tokens continue above every token seen").isGreaterThan(maxBefore);
            List<String> violations = history.check();
            System.out.printf("DiskLossIntegrationTests seed %d: %d grants (%d before the leader died), outcomes %s,"
                    + " %d violations%n", SEED, history.tickets(), grantsBefore, history.outcomeCounts(), violations.size());
            assertThat(violations).isEmpty();
        } finally {
            load.stop();
            for (ServerProcess p : cluster.nodes) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }

    private String line(int i, String text) throws IOException {
        return cluster.nodes[i].output().lines().filter(l -> l.contains(text)).findFirst().orElse("");
    }

    private void restart(int i) throws IOException {
        cluster.nodes[i].close();
        cluster.launch(i, nodeProps(i));
    }

    private Map<String, String> nodeProps(int i) {
        return cluster.props(i, "WARN", Map.of());
    }

    private void awaitLog(int i, String text, long timeoutMs) throws Exception {
        cluster.awaitLog(i, text, timeoutMs);
    }

    private static void deleteTree(Path p) throws IOException {
        if (Files.exists(p)) {
            try (var s = Files.walk(p)) {
                for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(q);
                }
            }
        }
    }

}
