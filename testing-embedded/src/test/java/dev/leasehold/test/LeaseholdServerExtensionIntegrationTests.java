package dev.leasehold.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;

class LeaseholdServerExtensionIntegrationTests {

    @Nested
    @WithLeaseholdServer
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class OnePerClass {

        private final Set<Integer> ports = new HashSet<>();

        @Test
        void givesTheServerAndAConnectedClient(TestingServer server, LeaseholdClient client) {
            ports.add(server.port());
            assertThat(server.isRunning()).isTrue();
            assertThat(client.acquire("per-class-a", 0, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
        }

        @Test
        void theSameServerInTheNextTest(TestingServer server) {
            ports.add(server.port());
        }

        @AfterAll
        void oneServerServedBothTests() {
            assertThat(ports).hasSize(1);
        }
    }

    @Nested
    @WithLeaseholdServer(perMethod = true)
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class OnePerMethod {

        private final Set<Integer> ports = new HashSet<>();

        @Test
        void first(TestingServer server, LeaseholdClient client) {
            ports.add(server.port());
            assertThat(client.acquire("same-key", 0, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
        }

        @Test
        void second(TestingServer server, LeaseholdClient client) {
            ports.add(server.port());
            // A fresh server: the key the other test held is free here.
            assertThat(client.acquire("same-key", 0, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
        }

        @AfterAll
        void eachTestHadItsOwn() {
            assertThat(ports).hasSize(2);
        }
    }

    @Nested
    class Registered {

        @RegisterExtension
        static LeaseholdServerExtension leasehold = LeaseholdServerExtension.single();

        private static String address;

        @BeforeAll
        static void addressIsKnownBeforeTheTests() {
            address = leasehold.server().address();
        }

        @Test
        void aFieldGivesTheAddress() {
            assertThat(leasehold.server().address()).isEqualTo(address);
            try (LeaseholdClient client = LeaseholdClient.create(address)) {
                assertThat(client.acquire("registered", 0, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
            }
        }
    }

    @Nested
    class OnAMethod {

        @Test
        @WithLeaseholdServer(nodes = 3)
        void aClusterForOneTest(TestingCluster cluster, LeaseholdClient client) {
            assertThat(cluster.size()).isEqualTo(3);
            assertThat(cluster.leader()).isNotNegative();
            assertThat(client.acquire("cluster-key", 5, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
        }
    }
}
