package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.support.Wait;

/**
 * Three cluster nodes in one JVM (real Ratis over loopback gRPC, real protocol ports, temp
 * dirs): grants replicate to every copy of the table, a follower answers {@code X 8} naming the
 * leader, and a new leader keeps every lease the old one granted (promotion), with the exact
 * token, and continues the token counter.
 */
class ClusterInProcessIntegrationTests {

    @RegisterExtension
    final InProcessClusters clusters = new InProcessClusters();

    private InProcessCluster cluster;

    @Test
    void grantsReplicateFollowersNameTheLeaderAndANewLeaderKeepsEveryLease() throws Exception {
        cluster = clusters.start(Duration.ofMillis(1000), Duration.ofMillis(2000));
        int[] client = clusters.clientPorts();
        int leader = cluster.awaitServingLeader(-1);

        // A grant on the leader, answered after it committed, is in every node's table.
        long token;
        try (Conn c = new Conn(client[leader])) {
            token = c.grant(8, 1, "orders/42");
        }
        Wait.until("the held key in every node's table (held keys of n0, n1, n2)", Duration.ofSeconds(10),
                () -> IntStream.range(0, 3).map(i -> cluster.node(i).status().replicatedHeldKeys()).boxed().toList(),
                held -> held.stream().allMatch(n -> n == 1));

        // A follower executes nothing and names the leader's protocol address.
        int follower = (leader + 1) % 3;
        try (Conn c = new Conn(client[follower])) {
            c.send(ClusterWire.acquire(0, 5, 2, "other"));
            Answer x = c.read(5000);
            assertThat((char) x.op()).isEqualTo('X');
            assertThat(x.code()).isEqualTo(8);
            assertThat(x.message()).isEqualTo("leader=127.0.0.1:" + client[leader]);
        }
        assertThat(cluster.registry(follower).heldKeys()).as("followers hold no leader view").isZero();

        // Revision 1.4 (PROTOCOL.md 14.5, 15.6): every node answers H; a follower answers the first
        // M or W of a session with X 8 naming the leader, as it does A.
        dev.leasehold.protocol.Answer hello = new dev.leasehold.protocol.Answer.Hello(Wire.REVISION_1_4, LeaseholdServer.Settings.DEFAULT_MAX_WAIT.toMillis(),
                LeaseholdServer.Settings.DEFAULT_MAX_VALUE_BYTES);
        for (Request first : List.of(Request.MilliAcquire.exclusive(200, 5, 3, Request.key("other")),
                new Request.Withdraw(3, Request.key("other")))) {
            try (RawClient c = new RawClient(client[follower])) {
                assertThat(c.send(new Request.Hello(Wire.REVISION_1_4)).next()).as("H on a follower").isEqualTo(hello);
                dev.leasehold.protocol.Answer x = c.send(first).next(5000);
                assertThat(x).as("%s on a follower", first)
                        .isEqualTo(new dev.leasehold.protocol.Answer.Error(8, "leader=127.0.0.1:" + client[leader]));
            }
        }
        // On the leader: H, an M queued behind the held key, its W answered T at once (no log write).
        try (RawClient c = new RawClient(client[leader])) {
            assertThat(c.send(new Request.Hello(Wire.REVISION_1_4)).next()).as("H on the leader").isEqualTo(hello);
            c.send(Request.MilliAcquire.exclusive(30_000, 5, 4, Request.key("orders/42")), new Request.Ping(4));
            assertThat(c.next()).as("the M queued behind the 8 s grant").isEqualTo(new dev.leasehold.protocol.Answer.Pong(4));
            assertThat(c.send(new Request.Withdraw(4, Request.key("orders/42"))).next(5000))
                    .isEqualTo(new dev.leasehold.protocol.Answer.TimedOut(4));
            assertThat(c.send(Request.MilliAcquire.exclusive(0, 5, 5, Request.key("m/leader"))).next(5000))
                    .as("an M granted on the leader after its commit").isInstanceOf(dev.leasehold.protocol.Answer.Acquired.class);
        }

        // The official client, given the followers first: X 8 with a hint, one resend to the
        // leader with the same owner, then every request goes to the leader.
        int other = (leader + 2) % 3;
        try (LeaseholdClient lh = LeaseholdClient.create("127.0.0.1:" + client[follower],
                "127.0.0.1:" + client[other], "127.0.0.1:" + client[leader])) {
            for (int i = 0; i < 5; i++) {
                AcquireOutcome o = lh.acquire("client/" + i, 2, 5);
                assertThat(o).as("acquire %d through a seed list that starts with followers", i)
                        .isInstanceOf(AcquireOutcome.Acquired.class);
                assertThat(((AcquireOutcome.Acquired) o).ticket().release()).isEqualTo(ReleaseOutcome.RELEASED);
            }
        }

        // The leader goes away gracefully (leadership transfer, then stop). The new leader keeps
        // the 8 s grant with its token (T for anyone else, R for the holder's Release) and issues
        // larger tokens.
        long stoppedAt = System.nanoTime();
        cluster.stop(leader);
        int next = cluster.awaitServingLeader(leader);
        System.out.printf("graceful leadership move: new leader serving %d ms after stop() began%n",
                (System.nanoTime() - stoppedAt) / 1_000_000);
        try (Conn c = new Conn(client[next])) {
            c.send(ClusterWire.acquire(0, 5, 3, "orders/42"));
            assertThat((char) c.read(5000).op()).as("the promoted lease still holds the key").isEqualTo('T');
            c.send(ClusterWire.acquire(0, 5, 4, "fresh"));
            Answer fresh = c.read(5000);
            assertThat((char) fresh.op()).isEqualTo('A');
            assertThat(fresh.token()).as("tokens continue above the replicated counter").isGreaterThan(token);
            c.send(ClusterWire.release(token, "orders/42"));
            assertThat((char) c.read(5000).op()).as("the exact grant survived the failover").isEqualTo('R');
        }
    }

    /**
     * Snapshots every 10 entries: each node takes them (LockStateMachine knows its latest snapshot
     * without listing the directory), the log is purged behind them, and after a leadership move
     * the new leader still holds every lease of the snapshotted table and continues its tokens.
     */
    @Test
    void snapshotsAreTakenOnEveryNodeAndANewLeaderServesFromThem() throws Exception {
        cluster = clusters.start(Duration.ofMillis(1000), Duration.ofMillis(2000), Duration.ZERO, 10);
        int[] client = clusters.clientPorts();
        int leader = cluster.awaitServingLeader(-1);
        long last = 0;
        try (Conn c = new Conn(client[leader])) {
            for (int i = 0; i < 40; i++) { // one request at a time: at least one log entry each
                c.send(ClusterWire.acquire(0, 30, i, "held/" + i));
                Answer a = c.read(5000);
                assertThat((char) a.op()).as("acquire %d", i).isEqualTo('A');
                last = a.token();
            }
        }
        Wait.until("a snapshot and the 40 held keys on every node", Duration.ofSeconds(20), () -> {
            List<String> seen = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                try (var files = java.nio.file.Files.walk(clusters.dir().resolve("n" + i))) {
                    boolean snapshot = files.anyMatch(f -> f.getFileName().toString().startsWith("snapshot."));
                    seen.add("n" + i + (snapshot ? " snapshot, " : " no snapshot, ")
                            + cluster.node(i).status().replicatedHeldKeys() + " held");
                }
            }
            return seen;
        }, seen -> seen.stream().allMatch(s -> s.endsWith(" snapshot, 40 held")));
        cluster.stop(leader);
        int next = cluster.awaitServingLeader(leader);
        try (Conn c = new Conn(client[next])) {
            c.send(ClusterWire.acquire(0, 5, 100, "held/0"));
            assertThat((char) c.read(5000).op()).as("the lease from before the snapshot still holds").isEqualTo('T');
            c.send(ClusterWire.acquire(0, 5, 101, "fresh"));
            Answer fresh = c.read(5000);
            assertThat((char) fresh.op()).isEqualTo('A');
            assertThat(fresh.token()).isGreaterThan(last);
        }
    }
}
