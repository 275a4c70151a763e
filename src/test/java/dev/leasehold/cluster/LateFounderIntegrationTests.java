package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.PartitionNet;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Seeds;

/**
 * A founding member that comes in late is not mistaken for a lost disk (docs/cluster.md "When a
 * disk is lost"; {@link Roster}). Three real server processes on empty directories, each in its
 * own network namespace; n3 cannot open connections to the others (its peers can reach it and
 * hear it answer "no group"), so n1 and n2 form the cluster and grant while n3 still sees nobody.
 * Then n3's dials go through: it finds the peers formed and with data, exactly as a wiped node
 * would, and asks the group's roster, which says n3 never stored the log. n3 formats and joins.
 * Proof that it is a voter with the data: the leader is killed and the two left, n3 one of them,
 * elect a leader that goes on above every token seen, with no overlap in the history.
 *
 * <p>Before the roster this start order made n3 refuse for good (seen as intermittent failures of
 * three-node tests on a loaded machine, where the slowest JVM started its probes last).
 */
@FaultRun
class LateFounderIntegrationTests {

    private static final long SEED = Seeds.seed("LateFounderIntegrationTests");
    private static final int PORT = 7420;
    private static final int RAFT_PORT = 7430;

    @TempDir
    Path dir;

    private final String[] ids = {"n1", "n2", "n3"};
    private final ServerProcess[] nodes = new ServerProcess[3];

    @Test
    void aFoundingMemberThatStartsAfterTheOthersFormedJoinsAndVotes() throws Exception {
        String why = PartitionNet.unavailableReason();
        Assumptions.assumeTrue(why == null, why);
        ClusterHistory history = new ClusterHistory();
        ClusterLoad load = null;
        PartitionNet net = PartitionNet.create(3, new Random(SEED));
        try {
            net.refuseDial(2, 0);
            net.refuseDial(2, 1);
            List<InetSocketAddress> addrs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                addrs.add(new InetSocketAddress(net.address(i), PORT));
                nodes[i] = launch(net, i);
            }
            load = new ClusterLoad(addrs, history, 1);
            awaitLog(0, "first formation of the cluster", 180_000);
            awaitLog(1, "first formation of the cluster", 60_000);
            int first = load.leader(60_000);
            assertThat(first).as("n1 and n2 form the cluster (%s)%s", load.lastProbe(), lastLogs()).isIn(0, 1);
            load.start(4, SEED);
            assertThat(history.awaitMoreGrants(50, 60_000)).as("grants from n1 and n2").isTrue();
            assertThat(nodes[2].output()).as("n3 has not decided yet").doesNotContain("Raft storage formatted")
                    .doesNotContain("REFUSES");

            net.heal();
            long healed = System.nanoTime();
            awaitLog(2, "joins the formed cluster", 60_000);
            System.out.printf("LateFounderIntegrationTests: n3 joined %d ms after it could reach its peers%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed));
            awaitLog(2, "Roster (members that have stored the log): [n1, n2, n3]", 60_000);

            int leader = load.leader(30_000);
            assertThat(leader).as("n1 or n2 still leads after n3 joined (%s)%s", load.lastProbe(), lastLogs()).isIn(0, 1);
            long maxBefore = history.maxToken();
            nodes[leader].kill9();
            int next = load.leader(60_000);
            assertThat(next).as("n3's vote elects a leader among the two left (%s)%s", load.lastProbe(), lastLogs()).isNotNegative().isNotEqualTo(leader);
            assertThat(history.awaitMoreGrants(50, 60_000)).as("grants after the failover").isTrue();
            load.stop();
            assertThat(history.maxToken()).as("tokens continue above every token seen").isGreaterThan(maxBefore);
            List<String> violations = history.check();
            System.out.printf("LateFounderIntegrationTests seed %d: %d grants, outcomes %s, %d violations%n", SEED,
                    history.tickets(), history.outcomeCounts(), violations.size());
            assertThat(violations).isEmpty();
        } finally {
            if (load != null) {
                load.stop();
            }
            for (ServerProcess p : nodes) {
                if (p != null) {
                    p.close();
                }
            }
            net.close(); // after the servers: a namespace still holding a process outlives its deletion
        }
    }

    private ServerProcess launch(PartitionNet net, int i) throws IOException {
        Map<String, String> p = ServerProcess.props("leasehold.port", String.valueOf(PORT), "leasehold.address", "0.0.0.0",
                "leasehold.cluster.node-id", ids[i], "logging.level.org.apache.ratis", "WARN");
        for (int j = 0; j < 3; j++) {
            p.put("leasehold.cluster.peers." + ids[j] + ".raft-address", net.address(j) + ":" + RAFT_PORT);
            p.put("leasehold.cluster.peers." + ids[j] + ".client-address", net.address(j) + ":" + PORT);
        }
        return ServerProcess.launch(dir.resolve(ids[i]), p, net.exec(i), Map.of());
    }

    /** What each node last logged, for a failure message: a missing leader is explained by the nodes' own words. */
    private String lastLogs() throws IOException {
        return ServerProcess.lastLogs(ids, nodes, 40);
    }

    private void awaitLog(int i, String text, long timeoutMs) throws Exception {
        nodes[i].awaitOutput(ids[i], text, timeoutMs);
    }
}
