package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.KeyView;
import dev.leasehold.testing.support.Wait;

/**
 * Lock-delay in a three-node cluster (PROTOCOL.md section 12, 8 s): the expiry's delay is
 * replicated as a duration, so every node's table keeps the key; a new leader runs the whole
 * delay again from the moment it serves, so a waiter there is granted no earlier than that.
 */
class ClusterLockDelayIntegrationTests {

    @RegisterExtension
    final InProcessClusters clusters = new InProcessClusters();

    private InProcessCluster cluster;

    @Test
    void theDelayIsReplicatedAndRunsAgainInFullOnANewLeader() throws Exception {
        // Lock-delay 8 s: 3 s ran out once between promotion and the check at load 20.
        cluster = clusters.start(Duration.ofMillis(1000), Duration.ofMillis(2000), Duration.ofSeconds(8), 100_000);
        int[] client = clusters.clientPorts();
        int leader = cluster.awaitServingLeader(-1);
        long token;
        try (Conn c = new Conn(client[leader])) {
            token = c.grant(1, 1, "delayed/1");
        }
        // The lease ends after 1 s; the key is then in lock-delay on the leader and in every table.
        // 5 s: the key must still be in its 8 s lock-delay when it is inspected below.
        Wait.until("the key in lock-delay on the leader (n" + leader + "'s delayed keys)", Duration.ofSeconds(5),
                () -> cluster.registry(leader).delayedKeys(), n -> n == 1);
        KeyView v = cluster.registry(leader).inspect(Request.key("delayed/1"), 1);
        assertThat(v.state()).isEqualTo(KeyView.State.DELAYED);
        assertThat(v.delayedToken()).isEqualTo(token);
        Wait.until("the delayed key in every node's table (held keys of n0, n1, n2)", Duration.ofSeconds(30),
                () -> IntStream.range(0, 3).map(i -> cluster.node(i).status().replicatedHeldKeys()).boxed().toList(),
                held -> held.stream().allMatch(n -> n == 1));
        try (Conn c = new Conn(client[leader])) {
            c.send(ClusterWire.acquire(0, 5, 2, "delayed/1"));
            assertThat((char) c.read(5000).op()).as("delayed: T for wait 0").isEqualTo('T');
        }

        // The new leader starts serving during stop() (a leadership transfer first): no earlier
        // than this instant, so its fresh 8 s delay ends no earlier than 8 s after it.
        long stopping = System.nanoTime();
        cluster.stop(leader);
        int next = cluster.awaitServingLeader(leader);
        assertThat(cluster.registry(next).inspect(Request.key("delayed/1"), 1).state())
                .as("the new leader runs the delay again").isEqualTo(KeyView.State.DELAYED);
        try (Conn c = new Conn(client[next])) {
            c.send(ClusterWire.acquire(20, 5, 3, "delayed/1"));
            Answer a = c.read(25_000);
            long afterMs = (System.nanoTime() - stopping) / 1_000_000;
            System.out.printf("lock-delay across a failover: granted %d ms after the old leader began to stop%n",
                    afterMs);
            assertThat((char) a.op()).isEqualTo('A');
            assertThat(a.token()).isGreaterThan(token);
            assertThat(afterMs).as("the whole 8 s delay from promotion").isGreaterThanOrEqualTo(7900);
        }
        Wait.until("the lock-delay to end on the new leader (n" + next + "'s delayed keys)", Duration.ofSeconds(10),
                () -> cluster.registry(next).delayedKeys(), n -> n == 0);
    }
}
