package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.cluster.ClusterFaultIntegrationTests.Answer;
import dev.leasehold.cluster.ClusterFaultIntegrationTests.Conn;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.RegistryTimer;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.server.SessionNotifier;

/**
 * Three cluster nodes in one JVM (real Ratis over loopback gRPC, real protocol ports, temp
 * dirs): grants replicate to every copy of the table, a follower answers {@code X 8} naming the
 * leader, and a new leader keeps every lease the old one granted (promotion), with the exact
 * token, and continues the token counter.
 */
class ClusterInProcessTests {

    @TempDir
    Path dir;

    private final Node[] nodes = new Node[3];
    private final AtomicBoolean fatal = new AtomicBoolean();

    private record Node(ClusterNode cluster, LockRegistry registry, LeaseholdServer server, RegistryTimer timer,
            int clientPort) {
        void start() {
            timer.start();
            server.start();
            cluster.start();
        }

        void stop() {
            cluster.stop();
            server.stop();
            timer.stop();
        }
    }

    @AfterEach
    void stopAll() {
        for (Node n : nodes) {
            if (n != null && n.cluster().isRunning()) {
                n.stop();
            }
        }
        assertThat(fatal).as("no node reported a failed log").isFalse();
    }

    @Test
    void grantsReplicateFollowersNameTheLeaderAndANewLeaderKeepsEveryLease() throws Exception {
        int[] client = {freePort(), freePort(), freePort()};
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            peers.put("n" + i, new ClusterSettings.Peer("127.0.0.1:" + freePort(), "127.0.0.1:" + client[i]));
        }
        for (int i = 0; i < 3; i++) {
            ClusterSettings s = new ClusterSettings("n" + i, peers, dir.resolve("n" + i), Duration.ofMillis(1000),
                    Duration.ofMillis(2000), 256, 8, 65536, 1000);
            ClusterNode c = new ClusterNode(s, NanoClock.SYSTEM, () -> fatal.set(true));
            LockRegistry r = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), NanoClock.SYSTEM, c.tokens(),
                    LeaseHorizon.UNBOUNDED, new SessionNotifier(c), RegistryObserver.NONE, c.decisions());
            LeaseholdServer srv = new LeaseholdServer(new LeaseholdServer.Settings("127.0.0.1", client[i], 512,
                    Duration.ofSeconds(10), 100, 1, Duration.ofSeconds(2), 128), r, NanoClock.SYSTEM, new ServerStats(),
                    ServerSecurity.NONE, c);
            c.attach(r, srv);
            nodes[i] = new Node(c, r, srv, new RegistryTimer(r), client[i]);
        }
        for (Node n : nodes) {
            n.start();
        }
        int leader = awaitServingLeader(-1);

        // A grant on the leader, answered after it committed, is in every node's table.
        long token;
        try (Conn c = new Conn(client[leader])) {
            c.send(ClusterFaultIntegrationTests.acquire(0, 8, 1, "orders/42"));
            Answer a = c.read(5000);
            assertThat((char) a.op()).isEqualTo('A');
            token = a.token();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            for (Node n : nodes) {
                if (n.cluster().status().replicatedHeldKeys() != 1) {
                    return false;
                }
            }
            return true;
        });

        // A follower executes nothing and names the leader's protocol address.
        int follower = (leader + 1) % 3;
        try (Conn c = new Conn(client[follower])) {
            c.send(ClusterFaultIntegrationTests.acquire(0, 5, 2, "other"));
            Answer x = c.read(5000);
            assertThat((char) x.op()).isEqualTo('X');
            assertThat(x.code()).isEqualTo(8);
            assertThat(x.message()).isEqualTo("leader=127.0.0.1:" + client[leader]);
        }
        assertThat(nodes[follower].registry().heldKeys()).as("followers hold no leader view").isZero();

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
        nodes[leader].stop();
        int next = awaitServingLeader(leader);
        System.out.printf("graceful leadership move: new leader serving %d ms after stop() began%n",
                (System.nanoTime() - stoppedAt) / 1_000_000);
        try (Conn c = new Conn(client[next])) {
            c.send(ClusterFaultIntegrationTests.acquire(0, 5, 3, "orders/42"));
            assertThat((char) c.read(5000).op()).as("the promoted lease still holds the key").isEqualTo('T');
            c.send(ClusterFaultIntegrationTests.acquire(0, 5, 4, "fresh"));
            Answer fresh = c.read(5000);
            assertThat((char) fresh.op()).isEqualTo('A');
            assertThat(fresh.token()).as("tokens continue above the replicated counter").isGreaterThan(token);
            c.send(ClusterFaultIntegrationTests.release(token, "orders/42"));
            assertThat((char) c.read(5000).op()).as("the exact grant survived the failover").isEqualTo('R');
        }
    }

    /** The index of a node that grants, other than {@code not}. */
    private int awaitServingLeader(int not) {
        int[] found = {-1};
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            for (int i = 0; i < 3; i++) {
                if (i != not && nodes[i].cluster().isRunning() && nodes[i].cluster().serving()) {
                    found[0] = i;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
