package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.cli.CliProcess;
import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Seeds;
import dev.leasehold.testing.support.Wait;

/**
 * A removed node knows it (PROTOCOL.md section 10, "A removed node"; docs/cluster.md "Changing
 * members"): three real server processes under a light contended load, one removed through the
 * real command line ({@code leasehold cluster remove}). The removed node logs it once at ERROR,
 * its health and readiness go DOWN with the reason, and it answers a lock request with {@code X 8}
 * "removed: not a member of this cluster", naming no leader; the remaining members never name it
 * as leader. The same after a restart on its data directory. The cluster checker's rules hold.
 */
class RemovedMemberIntegrationTests {

    private static final long SEED = Seeds.seed("RemovedMemberIntegrationTests");
    private static final String LOGGED = "was removed from the cluster";

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;
    private final int[] httpPorts = new int[3];
    private CliProcess cli;
    private ClusterLoad load;
    private ClusterHistory history;

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
    void aRemovedLeaderKnowsItAndNamesNoLeader() throws Exception {
        startUnderLoad();
        int leader = leader();
        int via = (leader + 1) % 3;
        remove(via, leader);
        checkRemoved(leader, "removed leader");
        checkOthersNeverName(leader);
        finish();
    }

    @Test
    void aRemovedFollowerKnowsItAndStillKnowsItAfterARestart() throws Exception {
        startUnderLoad();
        int leader = leader();
        int follower = (leader + 1) % 3;
        remove(leader, follower);
        checkRemoved(follower, "removed follower");
        checkOthersNeverName(follower);

        cluster.nodes[follower].close();
        cluster.launch(follower, props(follower));
        checkRemoved(follower, "removed follower, restarted");
        finish();
    }

    // ------------------------------------------------------------------ steps

    private void startUnderLoad() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        cli = new CliProcess(Files.createDirectories(dir.resolve("cli")));
        for (int i = 0; i < 3; i++) {
            httpPorts[i] = Ports.free();
        }
        for (int i = 0; i < 3; i++) {
            cluster.launch(i, props(i));
        }
        for (int i = 0; i < 3; i++) {
            cluster.awaitLog(i, "Raft storage formatted in", 120_000);
        }
        history = new ClusterHistory();
        load = new ClusterLoad(ClusterWire.loopback(cluster.clientPorts), history, 1);
        assertThat(load.leader(60_000)).as("a leader").isNotNegative();
        cluster.awaitEveryMemberStored(60_000);
        load.start(2, SEED);
        assertThat(history.awaitMoreGrants(20, 60_000)).as("grants before the removal").isTrue();
    }

    private Map<String, String> props(int i) {
        return cluster.props(i, "WARN", Map.of("server.port", String.valueOf(httpPorts[i]),
                "management.endpoints.web.exposure.include", "health,cluster",
                "management.endpoint.health.show-details", "always"));
    }

    private int leader() throws InterruptedException {
        int i = load.leader(60_000);
        assertThat(i).as("a leader").isNotNegative();
        return i;
    }

    private void remove(int via, int node) throws Exception {
        CliProcess.Result r = cli.run("cluster", "remove", cluster.ids[node], "--http",
                "http://127.0.0.1:" + httpPorts[via]);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(history.awaitMoreGrants(20, 60_000)).as("grants after the removal").isTrue();
    }

    /** The log line (once), health and readiness DOWN with the reason, and the answer to an Acquire. */
    private void checkRemoved(int node, String what) throws Exception {
        String id = cluster.ids[node];
        cluster.awaitLog(node, LOGGED, 30_000);
        Actuator actuator = new Actuator(httpPorts[node]);
        Actuator.Response health = Wait.until(id + "'s cluster health to go DOWN", Duration.ofSeconds(30),
                () -> actuator.get("/actuator/health"), r -> "DOWN".equals(r.json("components.cluster.status")));
        assertThat(health.<String>json("components.cluster.details.reason"))
                .startsWith("removed from the cluster: not a member");
        Actuator.Response ready = actuator.get("/actuator/health/readiness");
        assertThat(ready.status()).as(ready.body()).isEqualTo(503);
        assertThat(ready.body()).contains("removed from the cluster");

        Answer a;
        try (Conn c = new Conn(cluster.clientPorts[node])) {
            c.send(ClusterWire.acquire(0, 5, 9_000_000 + node, "removed-probe"));
            a = c.read(5000);
        }
        assertThat(a.op()).as(a.toString()).isEqualTo('X');
        assertThat(a.code()).as(a.toString()).isEqualTo(8);
        assertThat(a.message()).isEqualTo(Removal.NOT_A_MEMBER).doesNotContain("leader=");

        String out = cluster.nodes[node].output();
        String line = out.lines().filter(l -> l.contains(LOGGED)).findFirst().orElseThrow();
        assertThat(line).contains("ERROR");
        assertThat(out.lines().filter(l -> l.contains(LOGGED)).count()).as("logged once").isEqualTo(1);
        System.out.printf("RemovedMemberIntegrationTests (%s %s): log: %s%n  health: %s%n  readiness: %s%n  answer: %s%n",
                what, id, line.trim(), health.body(), ready.body(), a);
    }

    /** The remaining members name only each other in their hints, never the removed node. */
    private void checkOthersNeverName(int removed) throws Exception {
        String gone = "127.0.0.1:" + cluster.clientPorts[removed];
        for (int i = 0; i < 3; i++) {
            if (i == removed) {
                continue;
            }
            try (Conn c = new Conn(cluster.clientPorts[i])) {
                c.send(ClusterWire.acquire(0, 1, 8_000_000 + i, "hint-probe"));
                Answer a = c.read(5000);
                if (a.op() == 'A') {
                    c.send(ClusterWire.release(a.token(), "hint-probe"));
                } else {
                    assertThat(a.message()).as(cluster.ids[i] + " answered " + a).doesNotContain(gone);
                }
            }
        }
    }

    private void finish() throws InterruptedException {
        load.stop();
        List<String> violations = history.check();
        System.out.printf("RemovedMemberIntegrationTests seed %d: %d grants, outcomes %s, %d violations%n", SEED,
                history.tickets(), history.outcomeCounts(), violations.size());
        assertThat(violations).isEmpty();
    }
}
