package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.cli.CliProcess;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Seeds;

/**
 * Total loss of a three-node cluster, restored from a token-floor snapshot (docs/cluster.md
 * "Backup and restore of the token floor"): under a contended load, a snapshot is saved on the
 * leader with the real command line, the load goes on, then all three processes are killed and
 * their data directories deleted. Three new processes on empty directories with
 * {@code leasehold.restore-from} form a new cluster whose first token is above every token the
 * load saw before the loss (and above the snapshot's floor plus the margin).
 */
@FaultRun
class TotalLossRestoreIntegrationTests {

    private static final long SEED = Seeds.seed("TotalLossRestoreIntegrationTests");
    private static final long BLOCK = 100_000;

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;
    private final int[] httpPorts = new int[3];
    private CliProcess cli;
    private ClusterLoad load;

    @AfterEach
    void stop() throws InterruptedException {
        if (load != null) {
            load.stop();
        }
        if (cli != null) {
            cli.killAll();
        }
        if (cluster != null) {
            cluster.closeAll();
        }
    }

    @Test
    void aClusterRestoredAfterLosingEveryDiskIssuesTokensAboveEveryTokenSeen() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        cli = new CliProcess(Files.createDirectories(dir.resolve("cli")));
        for (int i = 0; i < 3; i++) {
            httpPorts[i] = Ports.free();
            cluster.launch(i, props(i, null));
        }
        for (int i = 0; i < 3; i++) {
            cluster.awaitLog(i, "Raft storage formatted in", 120_000);
        }
        ClusterHistory history = new ClusterHistory();
        load = new ClusterLoad(ClusterWire.loopback(cluster.clientPorts), history, 1);
        int leader = load.leader(60_000);
        assertThat(leader).as("a leader").isNotNegative();
        load.start(3, SEED);
        assertThat(history.awaitMoreGrants(40, 60_000)).as("grants before the snapshot").isTrue();

        // Asked on a follower: refused, naming the leader.
        int follower = (load.leader(60_000) + 1) % 3;
        Path file = dir.resolve("floor.snapshot");
        CliProcess.Result onFollower = save(follower, file);
        assertThat(onFollower.exitCode()).as(onFollower.out() + onFollower.err()).isEqualTo(68);
        assertThat(onFollower.err()).contains("not the serving leader");
        assertThat(file).doesNotExist();

        leader = load.leader(60_000);
        CliProcess.Result saved = save(leader, file);
        assertThat(saved.exitCode()).as(saved.out() + saved.err()).isZero();
        TokenFloorSnapshot snapshot = TokenFloorSnapshot.decode(Files.readString(file));
        assertThat(snapshot.roster()).containsExactlyInAnyOrder("n1", "n2", "n3");
        assertThat(snapshot.index()).isPositive();
        assertThat(history.awaitMoreGrants(40, 60_000)).as("grants after the snapshot").isTrue();

        // Total loss, under load.
        for (int i = 0; i < 3; i++) {
            cluster.nodes[i].kill9();
        }
        load.stop();
        long maxSeen = history.maxToken();
        assertThat(maxSeen).as("tokens issued after the snapshot").isGreaterThan(snapshot.tokenFloor());
        for (int i = 0; i < 3; i++) {
            cluster.nodes[i].close();
            deleteTree(dir.resolve(cluster.ids[i]));
        }

        for (int i = 0; i < 3; i++) {
            cluster.launch(i, props(i, file));
        }
        for (int i = 0; i < 3; i++) {
            cluster.awaitLog(i, "Restored from " + file, 120_000);
        }
        ClusterHistory restored = new ClusterHistory();
        ClusterLoad after = new ClusterLoad(ClusterWire.loopback(cluster.clientPorts), restored, 1_000_000);
        int newLeader = after.leader(120_000);
        assertThat(newLeader).as("the restored cluster elects a leader").isNotNegative();
        long first = restored.maxToken(); // the leader probe's grant: the restored cluster's first token
        try (Conn c = new Conn(cluster.clientPorts[newLeader])) {
            assertThat(c.grant(5, 42, "after-the-restore")).isGreaterThan(first);
        }
        System.out.printf("TotalLossRestoreIntegrationTests seed %d: %d grants before the loss, highest token seen %d,"
                + " snapshot floor %d (term %d, index %d, on %s), first token after the restore %d%n", SEED,
                history.tickets(), maxSeen, snapshot.tokenFloor(), snapshot.term(), snapshot.index(), snapshot.node(),
                first);
        assertThat(first).isGreaterThan(maxSeen).isGreaterThan(snapshot.tokenFloor() + BLOCK);
        assertThat(history.check()).isEmpty();
    }

    private CliProcess.Result save(int node, Path file) throws Exception {
        return cli.run("admin", "snapshot", "save", file.toString(), "--http", "http://127.0.0.1:" + httpPorts[node]);
    }

    private Map<String, String> props(int i, Path restoreFrom) {
        Map<String, String> extra = new LinkedHashMap<>(Map.of("server.port", String.valueOf(httpPorts[i]),
                "management.endpoints.web.exposure.include", "health,cluster,snapshot",
                "leasehold.token-block-size", String.valueOf(BLOCK)));
        if (restoreFrom != null) {
            extra.put("leasehold.restore-from", restoreFrom.toString());
        }
        return cluster.props(i, "WARN", extra);
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
