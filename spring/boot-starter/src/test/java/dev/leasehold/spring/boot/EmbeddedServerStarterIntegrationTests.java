package dev.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.spring.integration.LeaseholdLockRegistry;
import dev.leasehold.test.TestingServer;
import dev.leasehold.test.spring.EmbeddedLeaseholdServer;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The starter in a {@code @SpringBootTest} against the embedded server, as
 * docs/testing-your-app.md shows it: {@link EmbeddedLeaseholdServer} sets
 * {@code leasehold.client.servers}, and the auto-configured client, LockRegistry and ShedLock
 * provider lock on it.
 */
@SpringBootTest(classes = EmbeddedServerStarterIntegrationTests.App.class)
@EmbeddedLeaseholdServer
class EmbeddedServerStarterIntegrationTests {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Autowired
    TestingServer server;

    @Autowired
    LeaseholdClient client;

    @Autowired
    LeaseholdLockRegistry lockRegistry;

    @Autowired
    LockProvider lockProvider;

    @Test
    void lockRegistryLocksOnTheEmbeddedServer() throws InterruptedException {
        Lock lock = lockRegistry.obtain("orders");
        assertThat(lock.tryLock(Duration.ofSeconds(5).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).isTrue();
        try {
            // Another application instance (its own client) cannot take the same key meanwhile.
            try (LeaseholdClient other = LeaseholdClient.create(server.address())) {
                assertThat(other.acquire(lockRegistry.serverKey("orders"), 0, 5)).isInstanceOf(AcquireOutcome.TimedOut.class);
            }
        } finally {
            lock.unlock();
        }
    }

    @Test
    void shedLockProviderLocksOnTheEmbeddedServer() {
        LockConfiguration config = new LockConfiguration(Instant.now(), "nightly-report", Duration.ofSeconds(30), Duration.ZERO);
        Optional<SimpleLock> first = lockProvider.lock(config);
        assertThat(first).isPresent();
        assertThat(lockProvider.lock(config)).as("the job's lock is held").isEmpty();
        first.get().unlock();
        Optional<SimpleLock> again = lockProvider.lock(config);
        assertThat(again).isPresent();
        again.get().unlock();
    }

    @Test
    void theClientTalksToTheEmbeddedServer() throws Exception {
        assertThat(client.ping()).isPositive();
    }
}
