package dev.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.client.LeaseholdClient;
/**
 * A Spring user's bad {@code leasehold.*} setting ends start-up with a report that names it.
 * No server is needed: the client connects only on its first request.
 */
@ExtendWith(OutputCaptureExtension.class)
class LeaseholdClientPropertiesIntegrationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, LeaseholdClientAutoConfiguration.class,
                    LeaseholdLockRegistryAutoConfiguration.class));

    @Test
    void aBadServerAddressFailsTheContextNamingTheProperty() {
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:notaport").run(ctx -> {
            assertThat(ctx).hasFailed();
            FailureAnalysis analysis = analyze(ctx.getStartupFailure());
            assertThat(analysis.getDescription()).contains("leasehold.client.servers[0] = \"127.0.0.1:notaport\"")
                    .contains("'notaport' is not a number");
        });
    }

    @Test
    void aSettingThatDoesNotExistFailsNamingTheNearestOne() {
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:7420", "leasehold.client.pool-sise=4",
                "leasehold.client.tls.trust-certificate=ca.crt").run(ctx -> {
                    assertThat(ctx).hasFailed();
                    FailureAnalysis analysis = analyze(ctx.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .contains("Unknown setting leasehold.client.pool-sise = \"4\"",
                                    "did you mean leasehold.client.pool-size?",
                                    "did you mean leasehold.client.tls.trust-certificates?");
                });
    }

    @Test
    void relaxedFormsOfRealSettingsStillBind() {
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:7420", "leasehold.client.poolSize=3",
                "leasehold.client.connect_timeout=3s").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(LeaseholdClientProperties.class).getPoolSize()).isEqualTo(3);
                });
    }

    @Test
    void aBadOptionFailsEvenWithoutServers() {
        // The properties bind whether or not a client is made: a wrong value is wrong either way.
        runner.withPropertyValues("leasehold.client.pool-size=65").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(analyze(ctx.getStartupFailure()).getDescription())
                    .contains("leasehold.client.pool-size = \"65\"", "must be 1..64");
        });
    }

    @Test
    void anUnknownSslBundleNamesTheBundleProperty() {
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:7420", "leasehold.client.tls.bundle=locks")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    FailureAnalysis analysis = analyze(ctx.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .isEqualTo("Invalid leasehold.client.tls.bundle = locks: there is no SSL bundle of that name");
                    assertThat(analysis.getAction()).contains("spring.ssl.bundle.pem.locks");
                });
    }

    @Test
    void aKnownSslBundleTurnsTlsOn() {
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:7420", "leasehold.client.tls.bundle=locks",
                "spring.ssl.bundle.pem.locks.truststore.certificate=classpath:test-ca.pem")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(LeaseholdClient.class).options().tls()).isNotNull();
                });
    }

    @Test
    void anEmptyServerListAndABadRegistrySettingAreNamedToo() {
        runner.withPropertyValues("leasehold.client.servers=").run(ctx -> assertThat(
                analyze(ctx.getStartupFailure()).getDescription()).contains("leasehold.client.servers", "names no server"));
        runner.withPropertyValues("leasehold.client.servers=127.0.0.1:7420", "leasehold.integration.lock.lease=0s")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(analyze(ctx.getStartupFailure()).getDescription())
                            .startsWith("Invalid leasehold.integration.lock.lease = PT0S:");
                });
    }

    @Test
    void aRealStartPrintsBootsFailureReportNamingTheProperty(CapturedOutput output) {
        SpringApplication app = new SpringApplication(App.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        assertThatThrownBy(() -> app.run("--spring.config.name=bad-servers", "--spring.main.banner-mode=off"))
                .isInstanceOf(RuntimeException.class);
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("leasehold.client.servers[0] = \"127.0.0.1:99999\" (class path resource [bad-servers.properties]")
                .contains("99999 is not 1 to 65535; write host:port")
                .contains("Action:")
                .contains("Correct the leasehold.client settings above");
    }

    private static FailureAnalysis analyze(Throwable failure) {
        FailureAnalysis analysis = new LeaseholdPropertiesFailureAnalyzer().analyze(failure);
        assertThat(analysis).as("analysed: %s", failure).isNotNull();
        return analysis;
    }

    /** An application with the starter's auto-configuration, as a user's would be. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {
    }
}
