package dev.leasehold.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.store.StorageStatus;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.Actuator.Response;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * {@code /actuator/health} and its Kubernetes groups over HTTP, against the real application.
 * The tests share one server and leave it as they found it; draining is final, so it has its
 * own class ({@link DrainHealthIntegrationTests}). Two servers must not overlap in one JVM:
 * closing one disposes Reactor Netty's global HTTP resources that the other one uses.
 */
class HealthIntegrationTests {

    private static final Duration AWAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();
    private static Actuator actuator;

    @BeforeAll
    static void actuator() {
        actuator = new Actuator(server.httpPort());
    }

    @Test
    void upWithPortSessionsHeldKeysAndWaiters() throws Exception {
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            long token = ((Answer.Acquired) holder.send(acquire("h/up", 0, 30, 1)).next()).token();
            waiter.send(acquire("h/up", 30, 30, 2));
            Wait.untilAsserted("the server's health UP with its two sessions", AWAIT, () -> {
                Response r = actuator.get("/actuator/health");
                assertThat(r.status()).as(r.body()).isEqualTo(200);
                assertThat(r.<String>json("$.status")).isEqualTo("UP");
                assertThat(r.<String>json("$.components.leasehold.status")).isEqualTo("UP");
                assertThat(r.<Integer>json("$.components.leasehold.details.port")).isEqualTo(server.port());
                assertThat(r.<Integer>json("$.components.leasehold.details.sessions")).isEqualTo(2);
                assertThat(r.<Integer>json("$.components.leasehold.details.heldKeys")).isEqualTo(1);
                assertThat(r.<Integer>json("$.components.leasehold.details.waiters")).isEqualTo(1);
                assertThat(r.<Boolean>json("$.components.leasehold.details.draining")).isFalse();
                // TestServer turns the grace off: a server running without it must say so
                assertThat(r.<String>json("$.components.leasehold.details.recoveryGrace")).isEqualTo("off");
                assertThat(r.<Map<String, Object>>json("$.components.leasehold.details"))
                        .doesNotContainKeys("recoveryGraceRemainingMs", "storageProblems");
            });
            holder.send(new Request.Release(token, key("h/up"))).next();
            long second = ((Answer.Acquired) waiter.next()).token();
            waiter.send(new Request.Release(second, key("h/up"))).next();
        }
    }

    @Test
    void probeGroupsHoldOnlyTheirComponents() {
        Response live = actuator.get("/actuator/health/liveness");
        assertThat(live.status()).isEqualTo(200);
        assertThat(live.<Map<String, Object>>json("$.components").keySet()).containsExactly("livenessState");

        Response ready = actuator.get("/actuator/health/readiness");
        assertThat(ready.status()).isEqualTo(200);
        assertThat(ready.<Map<String, Object>>json("$.components").keySet())
                .containsExactlyInAnyOrder("readinessState", "leaseholdReadiness");
        assertThat(ready.<Integer>json("$.components.leaseholdReadiness.details.port")).isEqualTo(server.port());

        Response all = actuator.get("/actuator/health");
        assertThat(all.<Map<String, Object>>json("$.components").keySet())
                .contains("leasehold", "leaseholdReadiness", "diskSpace");
        assertThat(all.<String>json("$.components.diskSpace.details.path"))
                .as("diskSpace watches the data directory").isEqualTo(server.dataDir().toAbsolutePath().toString());
    }

    @Test
    void recoveryGraceIsShownWithTimeLeftAndReadinessStaysUp() throws Exception {
        LockRegistry registry = server.bean(LockRegistry.class);
        NanoClock clock = server.bean(NanoClock.class);
        registry.holdAllUntil(clock.nanoTime() + TimeUnit.SECONDS.toNanos(60));
        try {
            try (RawClient c = new RawClient(server.port())) {
                assertThat(c.send(acquire("h/grace", 0, 30, 1)).next())
                        .as("no grants during the grace").isEqualTo(new Answer.TimedOut(1));
            }
            Response all = actuator.get("/actuator/health");
            assertThat(all.status()).isEqualTo(200);
            assertThat(all.<String>json("$.components.leasehold.status")).isEqualTo("UP");
            assertThat(all.<Integer>json("$.components.leasehold.details.recoveryGraceRemainingMs"))
                    .isBetween(1, 60_000);
            Response ready = actuator.get("/actuator/health/readiness");
            assertThat(ready.status()).as(ready.body()).isEqualTo(200);
            assertThat(ready.<String>json("$.status")).isEqualTo("UP");
            assertThat(ready.<Integer>json("$.components.leaseholdReadiness.details.recoveryGraceRemainingMs"))
                    .isBetween(1, 60_000);
        } finally {
            registry.holdAllUntil(clock.nanoTime()); // end the grace for the other tests
        }
        assertThat(actuator.get("/actuator/health").<Map<String, Object>>json("$.components.leasehold.details"))
                .doesNotContainKey("recoveryGraceRemainingMs");
    }

    /**
     * Every {@link StorageStatus} bean counts, including ones that appear after start (the lease
     * horizon store is one more).
     */
    @Test
    void anyStorageStatusWithAProblemMakesLeaseholdDownButNotTheProbes() {
        AtomicReference<String> problem = new AtomicReference<>("cannot write /data/horizon: No space left on device");
        StorageStatus store = () -> Optional.ofNullable(problem.get());
        server.context().getBeanFactory().registerSingleton("testFailingStore", store);
        try {
            Response all = actuator.get("/actuator/health");
            assertThat(all.status()).as(all.body()).isEqualTo(503);
            assertThat(all.<String>json("$.status")).isEqualTo("DOWN");
            assertThat(all.<String>json("$.components.leasehold.status")).isEqualTo("DOWN");
            assertThat(all.<List<String>>json("$.components.leasehold.details.storageProblems"))
                    .containsExactly("cannot write /data/horizon: No space left on device");
            assertThat(actuator.get("/actuator/health/liveness").status()).as("a full disk heals; no restart")
                    .isEqualTo(200);
            assertThat(actuator.get("/actuator/health/readiness").status()).as("one replica: stay reachable")
                    .isEqualTo(200);
            assertThat(actuator.scrape().value("leasehold_storage_failing")).isEqualTo(1);
        } finally {
            problem.set(null);
        }
        Response healed = actuator.get("/actuator/health");
        assertThat(healed.status()).isEqualTo(200);
        assertThat(healed.<String>json("$.components.leasehold.status")).isEqualTo("UP");
        assertThat(actuator.scrape().value("leasehold_storage_failing")).isZero();
    }

    /**
     * Back-to-back requests from one client that tries to keep its connection alive (the JDK
     * client, like Python's, sends the next request the moment it has read an answer): without
     * {@code server.netty.max-keep-alive-requests: 1} one of them was never answered within a
     * few dozen requests.
     */
    @Test
    void backToBackHealthRequestsFromOneKeepAliveClientAreAllAnswered() throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        for (int i = 0; i < 200; i++) {
            String path = i % 2 == 0 ? "/actuator/health/liveness" : "/actuator/health";
            java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest
                    .newBuilder(java.net.URI.create("http://127.0.0.1:" + server.httpPort() + path))
                    .timeout(java.time.Duration.ofSeconds(5)).GET().build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("request %d", i).isEqualTo(200);
        }
    }

    static Request.Acquire acquire(String key, int wait, int lease, long owner) {
        return new Request.Acquire(wait, lease, owner, key(key));
    }

    static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }
}
