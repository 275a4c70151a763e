package dev.leasehold.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.registry.HeldGrant;
import dev.leasehold.testing.support.Wait;

/**
 * Shared holds in cluster mode (PROTOCOL.md 13.9) on three in-process nodes (real Ratis over
 * loopback, real protocol ports): {@code S} is granted on the leader after its commit, every node's
 * replicated table has each shared grant with the key's limit, a follower answers {@code X 8}, and
 * after the leader stops the new leader keeps every shared grant (tokens, limit, leases): an
 * {@code A} waits for all of them and gets the key once they are released. The official client
 * takes shared grants through a seed list that starts with a stopped node and a follower.
 */
class ClusterSharedIntegrationTests {

    private static final String KEY = "config/pricing";
    private static final int LIMIT = 3;

    @RegisterExtension
    final InProcessClusters clusters = new InProcessClusters();

    @Test
    void sharedGrantsReplicateAndANewLeaderKeepsThemWithTheirLimit() throws Exception {
        InProcessCluster cluster = clusters.start(Duration.ofMillis(1000), Duration.ofMillis(2000));
        int[] client = clusters.clientPorts();
        int leader = cluster.awaitServingLeader(-1);

        List<Long> tokens = new ArrayList<>();
        try (Conn c = new Conn(client[leader])) {
            for (int owner = 1; owner <= LIMIT; owner++) {
                c.send(ClusterWire.sharedAcquire(0, 20, owner, LIMIT, KEY));
                Answer a = c.read(5000);
                assertThat(a.op()).as("shared acquire %d on the leader: %s", owner, a).isEqualTo((int) 'A');
                tokens.add(a.token());
            }
            c.send(ClusterWire.sharedAcquire(0, 20, 4, LIMIT, KEY));
            assertThat(c.read(5000).toString()).as("every permit taken").isEqualTo("T");
            c.send(ClusterWire.sharedAcquire(0, 20, 5, 2, KEY));
            assertThat(c.read(5000).toString()).isEqualTo("L limit " + LIMIT);
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();

        Wait.until("the three shared grants with limit " + LIMIT + " in every node's replicated table",
                Duration.ofSeconds(10), () -> sharedRows(cluster),
                rows -> rows.stream().allMatch(r -> r.endsWith(" " + KEY + " limit " + LIMIT + " " + tokens)));

        int follower = (leader + 1) % 3;
        try (Conn c = new Conn(client[follower])) {
            c.send(ClusterWire.sharedAcquire(0, 5, 6, LIMIT, KEY));
            assertThat(c.read(5000).toString()).as("a follower executes no S")
                    .isEqualTo("X 8 leader=127.0.0.1:" + client[leader]);
        }

        cluster.stop(leader);
        int next = cluster.awaitServingLeader(leader);
        try (Conn reader = new Conn(client[next]); Conn writer = new Conn(client[next])) {
            reader.send(ClusterWire.sharedAcquire(0, 5, 7, 2, KEY));
            assertThat(reader.read(5000).toString()).as("the key keeps its limit").isEqualTo("L limit " + LIMIT);
            reader.send(ClusterWire.sharedAcquire(0, 5, 8, LIMIT, KEY));
            assertThat(reader.read(5000).toString()).as("every permit still taken").isEqualTo("T");
            for (long t : tokens) {
                reader.send(ClusterWire.check(t, KEY));
                assertThat(reader.read(5000).toString()).as("promoted shared grant %d", t).isEqualTo("C");
            }
            reader.send(ClusterWire.extend(30, tokens.get(0), KEY));
            assertThat(reader.read(5000).toString()).isEqualTo("E");

            writer.send(ClusterWire.acquire(30, 10, 9, KEY)); // queues behind the three shared grants
            reader.send(ClusterWire.release(tokens.get(0), KEY));
            assertThat(reader.read(5000).toString()).isEqualTo("R");
            reader.send(ClusterWire.release(tokens.get(1), KEY));
            assertThat(reader.read(5000).toString()).isEqualTo("R");
            reader.send(ClusterWire.sharedAcquire(0, 5, 10, LIMIT, KEY));
            assertThat(reader.read(5000).toString()).as("free permits, but a writer waits (FIFO)").isEqualTo("T");
            writer.send(ClusterWire.check(tokens.get(2), KEY));
            assertThat(writer.read(5000).toString()).as("the last reader holds: the writer's A is not out yet")
                    .isEqualTo("C");
            reader.send(ClusterWire.release(tokens.get(2), KEY));
            assertThat(reader.read(5000).toString()).isEqualTo("R");
            Answer granted = writer.read(5000);
            assertThat(granted.op()).as("the writer once every shared grant is gone: %s", granted)
                    .isEqualTo((int) 'A');
            assertThat(granted.token()).as("above every shared token").isGreaterThan(tokens.get(2));
        }
        Wait.until("the writer's exclusive grant in the two running nodes' tables", Duration.ofSeconds(10),
                () -> sharedRows(cluster), rows -> rows.stream().filter(r -> !r.equals("stopped")).allMatch(
                        r -> r.contains(" " + KEY + " exclusive ")));

        // The official client, given the stopped node and the follower first: it follows X 8 for S too.
        int follower2 = 3 - leader - next;
        try (LeaseholdClient lh = LeaseholdClient.create("127.0.0.1:" + client[leader], "127.0.0.1:" + client[follower2],
                "127.0.0.1:" + client[next])) {
            for (int i = 0; i < 2; i++) {
                AcquireOutcome o = lh.acquireShared("client/shared", 2, 2, 5);
                assertThat(o).as("shared acquire %d through the official client", i)
                        .isInstanceOf(AcquireOutcome.Acquired.class);
                assertThat(((AcquireOutcome.Acquired) o).ticket().release()).isEqualTo(ReleaseOutcome.RELEASED);
            }
        }
    }

    /** Each node's row for {@link #KEY} as its replicated table has it ("stopped" for a stopped node). */
    private static List<String> sharedRows(InProcessCluster cluster) {
        List<String> rows = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            if (!cluster.running(i)) {
                rows.add("stopped");
                continue;
            }
            String row = "none";
            for (HeldGrant h : cluster.node(i).replicated().held()) {
                if (new String(h.key(), UTF_8).equals(KEY)) {
                    row = !h.mode().isShared() ? KEY + " exclusive " + h.slots().get(0).token()
                            : KEY + " limit " + h.mode().limit() + " "
                                    + h.slots().stream().map(HeldGrant.Slot::token).sorted().toList();
                }
            }
            rows.add("n" + i + " " + row);
        }
        return rows;
    }
}
