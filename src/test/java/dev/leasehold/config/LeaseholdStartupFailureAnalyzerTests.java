package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.leasehold.settings.SettingException;
import dev.leasehold.store.DataDirectoryException;

/** Leasehold's own start-up errors get Spring's short report; other failures are left to others. */
class LeaseholdStartupFailureAnalyzerTests {

    private final LeaseholdStartupFailureAnalyzer analyzer = new LeaseholdStartupFailureAnalyzer();

    @Test
    void aSettingErrorDeepInABeanCreationChainIsTheDescriptionWithAnActionNamingTheProperty() {
        SettingException e = new SettingException("leasehold.tls.bundle", "locks",
                "no such SSL bundle; define spring.ssl.bundle.pem.locks");
        Throwable chain = new BeanCreationException("a", new BeanCreationException("b", new BeanCreationException("c", e)));
        FailureAnalysis analysis = analyzer.analyze(chain);
        assertThat(analysis.getDescription())
                .isEqualTo("Invalid leasehold.tls.bundle = locks: no such SSL bundle; define spring.ssl.bundle.pem.locks");
        assertThat(analysis.getAction()).isEqualTo(
                "Correct leasehold.tls.bundle as the message says; docs/configuration.md and docs/security.md describe it.");
        assertThat(analyzer.analyze(new BeanCreationException("x",
                new SettingException("leasehold.cluster.initial-token", 5, "this data directory holds ...")))
                .getAction()).isEqualTo("Correct leasehold.cluster.initial-token as the message says;"
                        + " docs/configuration.md describes it.");
    }

    @Test
    void theActionASettingErrorCarriesIsTheActionAndTheRootCauseIsAddedWhenTheMessageDoesNotSayIt() {
        SettingException e = SettingException.unusable("leasehold.port", 7420, "Cannot bind the protocol port "
                + "127.0.0.1:7420 (leasehold.address, leasehold.port): Failed to bind on [127.0.0.1:7420]",
                "Stop the process that listens on port 7420.",
                new RuntimeException("x", new java.net.BindException("Address already in use")));
        FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("server", e));
        assertThat(analysis.getDescription()).startsWith("Cannot bind the protocol port 127.0.0.1:7420")
                .endsWith("caused by: Address already in use");
        assertThat(analysis.getAction()).isEqualTo("Stop the process that listens on port 7420.");
    }

    @Test
    void anyOtherErrorOfLeaseholdsOwnGetsTheReportWithAGeneralAction() {
        IllegalStateException e = new IllegalStateException("Node n1 has no leasehold.cluster.tls.bundle, but ...");
        FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("x", e));
        assertThat(analysis.getDescription()).isEqualTo(e.getMessage());
        assertThat(analysis.getAction()).isEqualTo(LeaseholdStartupFailureAnalyzer.GENERAL_ACTION);
    }

    @Test
    void othersAreLeftToTheirOwnAnalyzers() {
        assertThat(analyzer.analyze(new BeanCreationException("x", new IllegalStateException(
                "thrown by a library", null) {
            {
                setStackTrace(new StackTraceElement[] {new StackTraceElement("org.example.Lib", "m", null, 1)});
            }
        }))).as("not thrown by Leasehold").isNull();
        assertThat(analyzer.analyze(new DataDirectoryException(Path.of("/d"), "m", "a", null)))
                .as("DataDirectoryFailureAnalyzer's").isNull();
        Throwable bind = catchThrowable(() -> RecoveryGraceTests.bind(Map.of("leasehold.port", "-1")));
        assertThat(bind).isInstanceOf(BindException.class).hasRootCauseInstanceOf(SettingException.class);
        assertThat(analyzer.analyze(bind)).as("Boot's: it names where the value was set").isNull();
    }
}
