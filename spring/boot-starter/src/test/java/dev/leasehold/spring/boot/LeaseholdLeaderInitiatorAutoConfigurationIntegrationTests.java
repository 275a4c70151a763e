package dev.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.DefaultLockRegistry;

import dev.leasehold.spring.integration.LeaseholdLeaderContext;
import dev.leasehold.spring.integration.LeaseholdLeaderInitiator;
import dev.leasehold.testing.support.LoopbackServer;
import dev.leasehold.testing.support.Wait;

/**
 * {@link LeaseholdLeaderInitiatorAutoConfiguration} with {@link ApplicationContextRunner}, against
 * a real server: the initiator only when enabled with a {@link Candidate}, its settings, its
 * lifecycle and events in the context, and bad settings failing start-up by name.
 */
class LeaseholdLeaderInitiatorAutoConfigurationIntegrationTests {

    private static LoopbackServer server;

    private final String role = "starter-" + UUID.randomUUID();
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseholdClientAutoConfiguration.class,
                    LeaseholdLockRegistryAutoConfiguration.class, LeaseholdLeaderInitiatorAutoConfiguration.class));

    @BeforeAll
    static void start() {
        server = LoopbackServer.shared();
    }

    private ApplicationContextRunner withServer(String... properties) {
        return runner.withPropertyValues("leasehold.client.servers=" + server.address())
                .withPropertyValues(properties);
    }

    private ApplicationContextRunner withCandidate(String... properties) {
        return withServer(properties).withBean(Candidate.class, () -> new DefaultCandidate("node-a", role));
    }

    @Test
    void onlyWhenEnabledWithACandidate() {
        withCandidate().run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LeaseholdLeaderInitiator.class));
        withCandidate("leasehold.integration.leader.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(LeaseholdLeaderInitiator.class));
        withServer("leasehold.integration.leader.enabled=true")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LeaseholdLeaderInitiator.class));
        runner.withPropertyValues("leasehold.integration.leader.enabled=true")
                .withBean(Candidate.class, () -> new DefaultCandidate("node-a", role))
                .run(ctx -> assertThat(ctx).as("no client without servers").hasNotFailed()
                        .doesNotHaveBean(LeaseholdLeaderInitiator.class));
        withCandidate("leasehold.integration.leader.enabled=true")
                .withClassLoader(new FilteredClassLoader(LeaseholdLeaderInitiator.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean("leaseholdLeaderInitiator"));
        withCandidate("leasehold.integration.leader.enabled=true")
                .run(ctx -> assertThat(ctx).hasSingleBean(LeaseholdLeaderInitiator.class));
    }

    @Test
    void backsOffForTheApplicationsOwnInitiator() {
        withCandidate("leasehold.integration.leader.enabled=true")
                .withUserConfiguration(OwnInitiatorConfig.class)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().doesNotHaveBean(LeaseholdLeaderInitiator.class);
                    assertThat(ctx).hasSingleBean(LockRegistryLeaderInitiator.class);
                });
    }

    @Test
    void settingsFromProperties() {
        withCandidate("leasehold.integration.leader.enabled=true", "leasehold.integration.leader.role=billing",
                "leasehold.integration.leader.key-prefix=apps/", "leasehold.integration.leader.lease=4s",
                "leasehold.integration.leader.campaign-wait=20s", "leasehold.integration.leader.auto-startup=false",
                "leasehold.integration.leader.phase=42")
                .run(ctx -> {
                    LeaseholdLeaderInitiator initiator = ctx.getBean(LeaseholdLeaderInitiator.class);
                    assertThat(initiator.election().key()).isEqualTo("apps/billing");
                    assertThat(initiator.election().identity()).isEqualTo("node-a");
                    assertThat(initiator.options().leaseSeconds()).isEqualTo(4);
                    assertThat(initiator.options().campaignWait()).isEqualTo(Duration.ofSeconds(20));
                    assertThat(initiator.isAutoStartup()).isFalse();
                    assertThat(initiator.getPhase()).isEqualTo(42);
                    assertThat(initiator.isRunning()).as("auto-startup off").isFalse();
                });
    }

    @Test
    void startsWithTheContextAndPublishesOnGranted() {
        List<OnGrantedEvent> granted = new CopyOnWriteArrayList<>();
        withCandidate("leasehold.integration.leader.enabled=true")
                .withBean("grants", ApplicationListener.class, () -> (ApplicationListener<OnGrantedEvent>) granted::add)
                .run(ctx -> {
                    LeaseholdLeaderInitiator initiator = ctx.getBean(LeaseholdLeaderInitiator.class);
                    assertThat(initiator.isRunning()).isTrue();
                    assertThat(initiator.election().key()).isEqualTo("si-leader/" + role);
                    Wait.until("OnGrantedEvent in the context", Duration.ofSeconds(10), () -> granted, g -> !g.isEmpty());
                    assertThat(granted.get(0).getRole()).isEqualTo(role);
                    assertThat(granted.get(0).getSource()).isSameAs(initiator);
                    LeaseholdLeaderContext context = (LeaseholdLeaderContext) granted.get(0).getContext();
                    assertThat(context.isLeader()).isTrue();
                    assertThat(context.term()).isPositive();
                });
    }

    @Test
    void aBadSettingFailsStartUpNamingIt() {
        for (String[] bad : new String[][] {
                {"leasehold.integration.leader.lease=0s", "leasehold.integration.leader.lease"},
                {"leasehold.integration.leader.lease=300s", "leasehold.integration.leader.lease"},
                {"leasehold.integration.leader.campaign-wait=0ms", "leasehold.integration.leader.campaign-wait"},
                {"leasehold.integration.leader.role= ", "leasehold.integration.leader.role"},
                {"leasehold.integration.leader.key-prefix=" + "k".repeat(5_000), "leasehold.integration.leader.key-prefix"}}) {
            withCandidate("leasehold.integration.leader.enabled=true", bad[0]).run(ctx -> {
                assertThat(ctx).hasFailed();
                assertThat(ctx.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class);
                InvalidLeaseholdPropertyException e = findInvalid(ctx.getStartupFailure());
                assertThat(e).as(bad[0]).isNotNull();
                assertThat(e.property()).isEqualTo(bad[1]);
                assertThat(e.getMessage()).startsWith("Invalid " + bad[1] + " = ");
            });
        }
    }

    @Test
    void configurationMetadataDescribesTheLeaderProperties() throws Exception {
        try (java.io.InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(json).contains("\"leasehold.integration.leader.enabled\"", "\"leasehold.integration.leader.role\"",
                    "\"leasehold.integration.leader.lease\"", "\"leasehold.integration.leader.campaign-wait\"",
                    "\"leasehold.integration.leader.auto-startup\"", "\"leasehold.integration.leader.phase\"");
        }
    }

    private static InvalidLeaseholdPropertyException findInvalid(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof InvalidLeaseholdPropertyException e) {
                return e;
            }
        }
        return null;
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnInitiatorConfig {
        @Bean
        LockRegistryLeaderInitiator myInitiator(Candidate candidate) {
            LockRegistryLeaderInitiator i = new LockRegistryLeaderInitiator(new DefaultLockRegistry(), candidate);
            i.setAutoStartup(false);
            return i;
        }
    }
}
