package example;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.test.TestingCluster;
import dev.leasehold.test.TestingServer;
import dev.leasehold.test.WithLeaseholdServer;

/** Written from docs/testing-your-app.md only: the plain-client and failover examples. */
@WithLeaseholdServer
class NightlyJobTests {

    @Test
    void secondInstanceWaits(TestingServer server, LeaseholdClient client) {
        var first = (AcquireOutcome.Acquired) client.acquire("jobs/nightly", 0, 30);
        try (LeaseholdClient otherInstance = LeaseholdClient.create(server.address())) {
            assertInstanceOf(AcquireOutcome.TimedOut.class, otherInstance.acquire("jobs/nightly", 0, 30));
        }
        first.ticket().release();
    }

    @Test
    void survivesALeaderKill() {
        try (TestingCluster cluster = TestingCluster.start()) {
            LeaseholdClient client = cluster.client();
            assertInstanceOf(AcquireOutcome.Acquired.class, client.acquire("orders", 5, 30));
            cluster.killLeader();
            cluster.awaitLeader();
            assertInstanceOf(AcquireOutcome.Acquired.class, client.acquire("orders-after", 10, 30));
        }
    }
}
