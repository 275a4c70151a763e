package dev.leasehold.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;

class TestingClusterIntegrationTests {

    @Test
    void failsOverWhenTheLeaderIsKilledAndTakesTheNodeBack() throws InterruptedException {
        Leftovers leftovers = Leftovers.snapshot();
        Path dir;
        long start = System.nanoTime();
        try (TestingCluster cluster = TestingCluster.start()) {
            System.out.println("TestingCluster.start() (three nodes, leader serving) took "
                    + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms");
            dir = cluster.dataDirectory();
            assertThat(cluster.addresses()).hasSize(3);
            LeaseholdClient client = cluster.client();
            AcquireOutcome first = client.acquire("failover", 5, 30);
            assertThat(first).isInstanceOf(AcquireOutcome.Acquired.class);
            long token = ((AcquireOutcome.Acquired) first).ticket().token();

            int old = cluster.killLeader();
            assertThat(cluster.isRunning(old)).isFalse();
            int leader = cluster.awaitLeader();
            assertThat(leader).isNotEqualTo(old);

            // The holder's session ended with the old leader; a new leader runs every lease it
            // knows of longer, so the key is granted once the old lease has ended.
            AcquireOutcome again = client.acquire("failover-2", 10, 30);
            assertThat(again).isInstanceOf(AcquireOutcome.Acquired.class);
            assertThat(((AcquireOutcome.Acquired) again).ticket().token()).isGreaterThan(token);

            cluster.restart(old);
            assertThat(cluster.isRunning(old)).isTrue();
            assertThat(cluster.logFailed()).isFalse();
        }
        Leftovers.assertGone(dir);
        leftovers.awaitNoNewThreads(Duration.ofSeconds(15));
    }
}
