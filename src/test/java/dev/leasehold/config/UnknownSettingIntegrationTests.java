package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * A setting under {@code leasehold.*} that does not exist stops the start, naming it and the
 * nearest one that does; the relaxed forms of real settings still bind. No sockets: the
 * properties alone, bound as the server binds them (a Spring context: an IntegrationTests by the suite rules).
 */
class UnknownSettingIntegrationTests {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(LeaseholdProperties.class)
    static class Settings {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Settings.class);

    @Test
    void aTypoFailsTheStartNamingTheKeyAndTheNearestValidOne() {
        runner.withPropertyValues("leasehold.max-waiter-per-key=5").run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new UnknownSettingFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis).as("the analyzer reports the start-up failure").isNotNull();
            assertThat(analysis.getDescription())
                    .contains("Unknown setting leasehold.max-waiter-per-key = \"5\"")
                    .contains("did you mean leasehold.max-waiters-per-key?");
            assertThat(analysis.getAction()).contains("docs/configuration.md");
        });
    }

    @Test
    void aKeyNothingIsNearIsNamedWithoutAGuess() {
        runner.withPropertyValues("leasehold.bogus=1").run(context -> {
            assertThat(context).hasFailed();
            FailureAnalysis analysis = new UnknownSettingFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(analysis.getDescription()).contains("Unknown setting leasehold.bogus = \"1\"")
                    .doesNotContain("did you mean");
        });
    }

    @Test
    void typosInNestedAndPerPeerSettingsAreFoundToo() {
        runner.withPropertyValues("leasehold.tls.client-auht=need", "leasehold.cluster.max-bach=9")
                .run(context -> {
                    assertThat(context).hasFailed();
                    String description = new UnknownSettingFailureAnalyzer().analyze(context.getStartupFailure())
                            .getDescription();
                    assertThat(description).contains("did you mean leasehold.tls.client-auth?")
                            .contains("did you mean leasehold.cluster.max-batch?");
                });
    }

    @Test
    void relaxedFormsOfRealSettingsStillBind() {
        runner.withPropertyValues("leasehold.maxPendingPerSession=7", "leasehold.max_held_keys=9",
                        "leasehold.cluster.raft-properties.[raft.server.log.force.sync.num]=16")
                .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                                Map.of("LEASEHOLD_MAX_WAITERS_PER_KEY", "5"))))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LeaseholdProperties p = context.getBean(LeaseholdProperties.class);
                    assertThat(p.maxWaitersPerKey()).isEqualTo(5);
                    assertThat(p.maxPendingPerSession()).isEqualTo(7);
                    assertThat(p.maxHeldKeys()).isEqualTo(9);
                    assertThat(p.cluster().raftProperties()).containsEntry("raft.server.log.force.sync.num", "16");
                });
    }

    /**
     * Spring leaves the environment and system properties out of the unknown-key check (a
     * container's environment holds variables of other programs: Kubernetes service links such as
     * LEASEHOLD_SERVICE_HOST); docs/configuration.md says so.
     */
    @Test
    void environmentVariablesAreNotChecked() {
        runner.withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                                Map.of("LEASEHOLD_SERVICE_HOST", "10.0.0.1"))))
                .run(context -> assertThat(context).hasNotFailed());
    }
}
