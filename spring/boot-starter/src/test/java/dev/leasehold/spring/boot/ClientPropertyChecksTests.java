package dev.leasehold.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.validation.ValidationBindHandler;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * {@code leasehold.client.*} is checked when it binds, and the failure report names each bad
 * property in its configuration form with its value and the rule. Binds with Boot's
 * {@link Binder} and the same validation handler Boot uses, without an application context.
 */
class ClientPropertyChecksTests {

    @TempDir
    Path dir;

    @Test
    void goodValuesBind() {
        assertThat(bind("servers", "locks-0:7420,locks-1,[::1]:7421,127.0.0.1:1", "pool-size", "64",
                "connect-timeout", "5m", "transport-deadline", "255s", "response-grace", "0s", "margin-floor", "10s",
                "drift-rate", "0.5", "thread-name-prefix", "app", "protocol-revision", "1.3")).isNull();
    }

    @Test
    void aPortThatIsNotANumberNamesThePropertyTheEntryAndTheFix() {
        String report = bind("servers", "locks-0:7420,127.0.0.1:notaport").getDescription();
        assertThat(report).contains("leasehold.client.servers[1] = \"127.0.0.1:notaport\"")
                .contains("'notaport' is not a number")
                .contains("write host:port with a port from 1 to 65535")
                .doesNotContain("servers[0]");
    }

    @Test
    void aPortOutOfRangeAndAnEntryWithoutHostAreRefused() {
        String report = bind("servers", "127.0.0.1:99999,:7420").getDescription();
        assertThat(report).contains("leasehold.client.servers[0] = \"127.0.0.1:99999\"")
                .contains("99999 is not 1 to 65535")
                .contains("leasehold.client.servers[1] = \":7420\"").contains("has no host");
    }

    @Test
    void everyBadOptionIsReportedAtOnceByItsPropertyName() {
        FailureAnalysis analysis = bind("servers", "locks:7420", "pool-size", "0", "connect-timeout", "0s",
                "transport-deadline", "256s", "response-grace", "-1s", "margin-floor", "11s", "drift-rate", "0.6",
                "thread-name-prefix", " ", "protocol-revision", "2");
        assertThat(analysis.getDescription())
                .contains("leasehold.client.protocol-revision = \"2\"", "must be auto, 1.3 or 1.4")
                .contains("leasehold.client.pool-size = \"0\"", "must be 1..64")
                .contains("leasehold.client.connect-timeout = \"0s\"", "must be more than 0 and at most PT5M")
                .contains("leasehold.client.transport-deadline = \"256s\"", "at most PT4M15S")
                .contains("leasehold.client.response-grace = \"-1s\"", "must be 0..PT5M")
                .contains("leasehold.client.margin-floor = \"11s\"", "must be 0..PT10S")
                .contains("leasehold.client.drift-rate = \"0.6\"", "must be 0..0.5")
                .contains("leasehold.client.thread-name-prefix = \" \"", "must not be blank")
                .doesNotContain("poolSize"); // the Java names stay out of a configuration report
        assertThat(analysis.getAction()).contains("docs/spring.md");
    }

    @Test
    void tlsFilesAreCheckedOnlyWhenTlsIsOn() throws Exception {
        Path missing = dir.resolve("missing-ca.pem");
        assertThat(bind("tls.trust-certificates", missing.toString())).as("TLS off: not used, not checked").isNull();

        assertThat(bind("tls.enabled", "true", "tls.trust-certificates", missing.toString()).getDescription())
                .contains("leasehold.client.tls.trust-certificates = \"" + missing + "\"")
                .contains("there is no such file");

        Path garbage = Files.writeString(dir.resolve("ca.pem"), "not a certificate");
        assertThat(bind("tls.enabled", "true", "tls.trust-certificates", garbage.toString()).getDescription())
                .contains("leasehold.client.tls.trust-certificates = \"" + garbage + "\"");

        Path store = Files.writeString(dir.resolve("trust.p12"), "not a key store");
        assertThat(bind("tls.enabled", "true", "tls.trust-store", store.toString(), "tls.trust-store-password", "x")
                .getDescription()).contains("leasehold.client.tls.trust-store = \"" + store + "\"");
    }

    @Test
    void tlsSettingsThatGoTogetherOrExcludeEachOther() throws Exception {
        Path file = Files.writeString(dir.resolve("client.pem"), "x");
        assertThat(bind("tls.enabled", "true", "tls.certificate", file.toString()).getDescription())
                .contains("leasehold.client.tls.private-key")
                .contains("leasehold.client.tls.certificate and leasehold.client.tls.private-key go together");
        assertThat(bind("tls.bundle", "locks", "tls.trust-certificates", file.toString()).getDescription())
                .as("a bundle turns TLS on, and excludes the files")
                .contains("leasehold.client.tls.bundle = \"locks\"", "not both");
        assertThat(bind("tls.bundle", " ").getDescription()).contains("leasehold.client.tls.bundle = \" \"");
        assertThat(bind("tls.bundle", "locks")).as("the name is looked up when the client is made").isNull();
    }

    /** Binds {@code leasehold.client.<name>=<value>...}; the failure analysis, or null if it bound. */
    private static FailureAnalysis bind(String... namesAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put("leasehold.client." + namesAndValues[i], namesAndValues[i + 1]);
        }
        LeaseholdClientProperties properties = new LeaseholdClientProperties();
        Throwable failure = catchThrowable(() -> new Binder(new MapConfigurationPropertySource(map))
                .bind(LeaseholdClientProperties.PREFIX, Bindable.ofInstance(properties),
                        new ValidationBindHandler(properties)));
        if (failure == null) {
            return null;
        }
        FailureAnalysis analysis = new LeaseholdPropertiesFailureAnalyzer().analyze(failure);
        assertThat(analysis).as("analysed: %s", failure).isNotNull();
        return analysis;
    }
}
