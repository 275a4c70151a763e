package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.leasehold.store.DataDirectoryException;

/** Leasehold's own start-up errors get Spring's short report; other failures are left to others. */
class LeaseholdStartupFailureAnalyzerTests {

    private final LeaseholdStartupFailureAnalyzer analyzer = new LeaseholdStartupFailureAnalyzer();

    /** Thrown here, in dev.leasehold code, as the configuration classes throw it. */
    private static IllegalStateException ours(String message, Throwable cause) {
        return new IllegalStateException(message, cause);
    }

    @Test
    void aLeaseholdErrorDeepInABeanCreationChainIsTheDescriptionWithAnActionNamingTheProperty() {
        IllegalStateException e = ours("Invalid leasehold.tls.bundle = locks: no such SSL bundle; define "
                + "spring.ssl.bundle.pem.locks", null);
        Throwable chain = new BeanCreationException("a", new BeanCreationException("b", new BeanCreationException("c", e)));
        FailureAnalysis analysis = analyzer.analyze(chain);
        assertThat(analysis.getDescription()).isEqualTo(e.getMessage());
        assertThat(analysis.getAction()).contains("Correct leasehold.tls.bundle").contains("docs/security.md");
    }

    @Test
    void theRootCauseIsAddedWhenTheMessageDoesNotSayIt() {
        IllegalStateException e = ours("Cannot bind the protocol port 127.0.0.1:7420 (leasehold.address, "
                + "leasehold.port): Failed to bind on [127.0.0.1:7420]",
                new RuntimeException("x", new java.net.BindException("Address already in use")));
        FailureAnalysis analysis = analyzer.analyze(new BeanCreationException("server", e));
        assertThat(analysis.getDescription()).endsWith("caused by: Address already in use");
        assertThat(analysis.getAction()).contains("ss -ltnp 'sport = :7420'");
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
    }
}
