package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.context.properties.bind.Binder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Ports;

/**
 * Start-up: bad settings fail fast naming the property; both ports bind loopback unless told
 * otherwise; Actuator shares the one HTTP port.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupIntegrationTests {

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({
            "leasehold.max-key-bytes, 0",
            "leasehold.port, 70000",
            "leasehold.max-waiters-per-key, -1",
            "leasehold.max-held-keys, 0",
            "leasehold.max-connections, 0",
            "leasehold.frame-timeout, 0s",
            "leasehold.token-block-size, 0",
            "leasehold.listen-backlog, 0",
            "leasehold.address, no-such-host.invalid",
            "leasehold.address, 192.0.2.1",         // resolves, but is not this host's: the bind fails
            "leasehold.tls.client-auth, need"})     // without leasehold.tls.bundle
    void invalidSettingFailsStartUpNamingTheProperty(String property, String value) {
        assertThatThrownBy(() -> TestServer.start(Map.of(property, value)))
                .satisfies(e -> assertThat(causes(e)).contains(property));
    }

    @Test
    void byDefaultBothPortsListenOnLoopbackOnlyAndSayNothingAboutIt(CapturedOutput output) throws Exception {
        InetAddress external = nonLoopbackAddress();
        try (TestServer server = TestServer.start()) {
            assertThat(server.bean(LeaseholdProperties.class).address()).isEqualTo("127.0.0.1");
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
                assertThat(s.isConnected()).isTrue();
            }
            if (external != null) {
                for (int port : new int[] {server.port(), server.httpPort()}) {
                    assertThatThrownBy(() -> new Socket(external, port).close())
                            .as("port %d on %s (not loopback)", port, external).isInstanceOf(ConnectException.class);
                }
            }
        }
        assertThat(output.getAll()).doesNotContain("reachable beyond this host in plaintext");
        assertThat(output.getAll().lines().filter(l -> l.contains("treating it as new")))
                .as("a first start is no warning").singleElement().asString().contains(" INFO ");
    }

    @Test
    void aPlaintextBindBeyondLoopbackWarnsOnceNamingTheTlsSettings(CapturedOutput output) throws Exception {
        try (TestServer server = TestServer.start(Map.of("leasehold.address", "0.0.0.0"))) {
            String warning = "WARN";
            assertThat(output.getAll().lines().filter(l -> l.contains("reachable beyond this host in plaintext")))
                    .singleElement().asString().contains(warning, "0.0.0.0:" + server.port(), "leasehold.tls.bundle");
        }
    }

    /** One of this host's non-loopback IPv4 addresses, or null (the test then checks loopback only). */
    private static InetAddress nonLoopbackAddress() throws Exception {
        for (NetworkInterface nic : java.util.Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nic.isUp() && !nic.isLoopback()) {
                for (InetAddress a : java.util.Collections.list(nic.getInetAddresses())) {
                    if (a instanceof java.net.Inet4Address) {
                        return a;
                    }
                }
            }
        }
        return null;
    }

    @Test
    void aBusyProtocolPortEndsWithSpringsShortReportNamingTheCauseAndWhatToDo() throws Exception {
        try (java.net.ServerSocket busy = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Throwable failure = org.assertj.core.api.Assertions.catchThrowable(() -> TestServer.start(
                    Map.of("leasehold.port", String.valueOf(busy.getLocalPort()))));
            assertThat(failure).isNotNull();
            org.springframework.boot.diagnostics.FailureAnalysis analysis =
                    new LeaseholdStartupFailureAnalyzer().analyze(failure);
            assertThat(analysis).as("Leasehold's analyzer reports it").isNotNull();
            assertThat(analysis.getDescription())
                    .startsWith("Cannot bind the protocol port 127.0.0.1:" + busy.getLocalPort())
                    .contains("Address already in use");
            assertThat(analysis.getAction()).contains("ss -ltnp 'sport = :" + busy.getLocalPort() + "'")
                    .contains("leasehold.port");
        }
    }

    @Test
    void sameExplicitPortForServerAndManagementServesActuatorThere() throws Exception {
        int port = Ports.free();
        try (TestServer server = TestServer.start(Map.of("server.port", String.valueOf(port),
                "management.server.port", String.valueOf(port)))) {
            HttpResponse<String> health = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"");
            assertThat(server.httpPort()).isEqualTo(port);
        }
    }

    @Test
    void defaultSettingsBindToTheDocumentedDefaults() throws Exception {
        try (TestServer server = TestServer.start()) {
            LeaseholdProperties p = server.bean(LeaseholdProperties.class);
            // every setting but the four TestServer sets is what @DefaultValue says (through
            // application.yml, which must not change any of them)
            LeaseholdProperties defaults = new Binder().bindOrCreate("leasehold", LeaseholdProperties.class);
            assertThat(p).usingRecursiveComparison()
                    .ignoringFields("port", "dataDir", "ioThreads", "recoveryGrace", "tls.bundle", "cluster.tls.bundle")
                    .isEqualTo(defaults);
            assertThat(p.tls().bundle()).as("no bundle: \"\" in application.yml, null without it").isEmpty();
            assertThat(p.cluster().tls().bundle()).as("no peer bundle: \"\" in application.yml").isEmpty();
            assertThat(p.cluster().tls().enabled()).isFalse();
            assertThat(p.maxKeyBytes()).isEqualTo(512);
            assertThat(p.frameTimeout()).hasSeconds(10);
            HttpResponse<String> health = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/actuator/health"))
                            .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
        }
    }

    private static String causes(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" | ");
        }
        return all.toString();
    }
}
