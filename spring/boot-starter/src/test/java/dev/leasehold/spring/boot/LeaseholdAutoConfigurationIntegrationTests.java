package dev.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.shedlock.LeaseholdLockProvider;
import dev.leasehold.spring.integration.LeaseholdLock;
import dev.leasehold.spring.integration.LeaseholdLockRegistry;
import dev.leasehold.testing.support.LoopbackServer;
import dev.leasehold.testing.support.Wait;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The starter's auto-configuration with {@link ApplicationContextRunner}, against a real
 * Leasehold server where a client must talk to one.
 */
class LeaseholdAutoConfigurationIntegrationTests {

    private static LoopbackServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseholdClientAutoConfiguration.class,
                    LeaseholdClientHealthAutoConfiguration.class,
                    LeaseholdLockRegistryAutoConfiguration.class, LeaseholdShedLockAutoConfiguration.class));

    @BeforeAll
    static void start() {
        server = LoopbackServer.shared();
    }

    @Test
    void noClientAndNoAdaptersWithoutServers() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx).doesNotHaveBean(LeaseholdClient.class);
            assertThat(ctx).doesNotHaveBean(LeaseholdLockRegistry.class);
            assertThat(ctx).doesNotHaveBean(LeaseholdLockProvider.class);
            assertThat(ctx).doesNotHaveBean(LeaseholdClientHealthIndicator.class);
        });
    }

    @Test
    void clientRegistryAndProviderFromProperties() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address(), "leasehold.client.pool-size=1",
                "leasehold.client.transport-deadline=3s", "leasehold.client.thread-name-prefix=app-locks",
                "leasehold.integration.lock.registry-key=orders", "leasehold.integration.lock.lease=10s",
                "leasehold.shedlock.key-prefix=jobs/")
                .withUserConfiguration(CustomizerConfig.class)
                .run(ctx -> {
                    LeaseholdClient client = ctx.getBean(LeaseholdClient.class);
                    assertThat(client.options().poolSize()).isEqualTo(1);
                    assertThat(client.options().transportDeadline()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(client.options().threadNamePrefix()).isEqualTo("app-locks");
                    assertThat(client.options().responseGrace()).as("from the customizer").isEqualTo(Duration.ofSeconds(1));

                    LeaseholdLockRegistry registry = ctx.getBean(LeaseholdLockRegistry.class);
                    assertThat(registry.serverKey("x")).isEqualTo("si/orders/x");
                    LeaseholdLock lock = registry.obtain("starter-" + System.nanoTime());
                    lock.lock();
                    assertThat(lock.remaining()).isGreaterThan(Duration.ofSeconds(5)).isLessThanOrEqualTo(Duration.ofSeconds(10));
                    lock.unlock();

                    LockProvider provider = ctx.getBean(LockProvider.class);
                    assertThat(provider).isInstanceOf(LeaseholdLockProvider.class);
                    SimpleLock job = provider.lock(new LockConfiguration(java.time.Instant.now(),
                            "starter-" + System.nanoTime(), Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
                    job.unlock();
                });
    }

    @Test
    void backsOffForTheApplicationsOwnBeans() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address())
                .withUserConfiguration(OwnBeansConfig.class)
                .run(ctx -> {
                    assertThat(ctx).getBean(LeaseholdClient.class).isSameAs(ctx.getBean("myClient"));
                    assertThat(ctx).doesNotHaveBean(LeaseholdLockRegistry.class);
                    assertThat(ctx).getBean(LockRegistry.class).isInstanceOf(DefaultLockRegistry.class);
                    assertThat(ctx).getBean(LockProvider.class).isSameAs(ctx.getBean("myProvider"));
                });
    }

    @Test
    void eachAdapterOnlyWithItsLibrary() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address())
                .withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(LeaseholdClient.class);
                    assertThat(ctx).doesNotHaveBean(LeaseholdLockRegistry.class);
                    assertThat(ctx).hasSingleBean(LeaseholdLockProvider.class);
                });
        runner.withPropertyValues("leasehold.client.servers=" + server.address())
                .withClassLoader(new FilteredClassLoader(LockProvider.class))
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(LeaseholdLockRegistry.class);
                    assertThat(ctx).doesNotHaveBean(LeaseholdLockProvider.class);
                });
    }

    @Test
    void healthIsUpWithTheRoundTripWhenTheServerAnswers() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address()).run(ctx -> {
            Health health = ctx.getBean("leaseholdClientHealthIndicator", LeaseholdClientHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsKey("pingRttMicros");
        });
    }

    @Test
    void healthIsDownWhenNoServerAnswers() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:" + closed,
                "leasehold.client.transport-deadline=500ms", "leasehold.client.connect-timeout=300ms").run(ctx -> {
                    Health health = ctx.getBean(LeaseholdClientHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                });
    }

    @Test
    void healthIndicatorCanBeSwitchedOff() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address(),
                "management.health.leaseholdclient.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(LeaseholdClientHealthIndicator.class));
    }

    @Test
    void acquiresAreObservedWithLowCardinalityOutcomeAndApi() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address())
                .withBean(ObservationRegistry.class, TestObservationRegistry::create)
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(AcquireObserver.class);
                    LeaseholdLock lock = ctx.getBean(LeaseholdLockRegistry.class).obtain("observed-" + System.nanoTime());
                    lock.lock();
                    lock.unlock();
                    TestObservationRegistry registry = (TestObservationRegistry) ctx.getBean(ObservationRegistry.class);
                    // The observation stops on the thread that completes the acquire, which may
                    // wake the caller first (a CompletableFuture runs its dependents in any order):
                    // it is stopped soon after lock() returns, not necessarily before.
                    Wait.untilAsserted("the acquire's observation to be stopped", Duration.ofSeconds(10),
                            () -> TestObservationRegistryAssert
                            .assertThat(registry)
                            .hasObservationWithNameEqualTo(ObservationAcquireObserver.NAME)
                            .that()
                            .hasLowCardinalityKeyValue("api", "spring-integration")
                            .hasLowCardinalityKeyValue("outcome", "acquired")
                            .doesNotHaveHighCardinalityKeyValueWithKey("key")
                            .hasBeenStopped());
                });
    }

    @Test
    void lostLeasesAreCounted() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address(), "leasehold.integration.lock.lease=3s")
                .withBean(io.micrometer.core.instrument.MeterRegistry.class,
                        io.micrometer.core.instrument.simple.SimpleMeterRegistry::new)
                .run(ctx -> {
                    LeaseholdLockRegistry registry = ctx.getBean(LeaseholdLockRegistry.class);
                    String key = "counted-" + System.nanoTime();
                    LeaseholdLock lock = registry.obtain(key);
                    lock.lock();
                    try (LeaseholdClient probe = LeaseholdClient.create(server.address())) {
                        probe.release(registry.serverKey(key), lock.fencingToken(), Duration.ofSeconds(5));
                    }
                    io.micrometer.core.instrument.MeterRegistry meters = ctx.getBean(
                            io.micrometer.core.instrument.MeterRegistry.class);
                    Wait.until("the counter leasehold.client.lease.lost{reason=NOT_HELD} (null: not registered yet)",
                            Duration.ofSeconds(10), () -> meters.find("leasehold.client.lease.lost").tag("reason", "NOT_HELD")
                                    .counter(), c -> c != null);
                    assertThat(meters.get("leasehold.client.lease.lost").counter().count()).isEqualTo(1.0);
                    org.assertj.core.api.Assertions.assertThatThrownBy(lock::unlock)
                            .isInstanceOf(java.util.ConcurrentModificationException.class);
                });
    }

    @Test
    void noObserverWithoutAnObservationRegistry() {
        runner.withPropertyValues("leasehold.client.servers=" + server.address())
                .run(ctx -> assertThat(ctx).doesNotHaveBean(AcquireObserver.class));
    }

    @Test
    void configurationMetadataDescribesTheProperties() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"leasehold.client.servers\"", "\"leasehold.client.pool-size\"",
                    "\"leasehold.client.tls.trust-certificates\"", "\"leasehold.integration.lock.lease\"",
                    "\"leasehold.shedlock.key-prefix\"");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomizerConfig {
        @Bean
        LeaseholdClientOptionsCustomizer grace() {
            return b -> b.responseGrace(Duration.ofSeconds(1));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeansConfig {
        @Bean(destroyMethod = "close")
        LeaseholdClient myClient() {
            return LeaseholdClient.create(server.address());
        }

        @Bean
        DefaultLockRegistry myRegistry() {
            return new DefaultLockRegistry();
        }

        @Bean
        LockProvider myProvider() {
            return cfg -> java.util.Optional.empty();
        }
    }
}
