package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.leasehold.testing.TestPki;
import dev.leasehold.testing.TestServer;

/** The command line over mutual TLS (in-process, against a real server with key ACLs). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliTlsIntegrationTests {

    Path dir;
    TestServer server;
    Level clientLogLevel;

    @BeforeAll
    void start() throws IOException {
        clientLogLevel = Logger.getLogger("dev.leasehold.client").getLevel(); // Main.run changes it
        dir = Files.createTempDirectory("leasehold-cli-tls");
        TestPki ca = TestPki.ca("CLI test CA");
        ca.writeCertificate(dir.resolve("ca.crt"));
        ca.server("leasehold").writePem(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        ca.client("CN=ops,O=Leasehold tests", new org.bouncycastle.asn1.x509.GeneralName(
                org.bouncycastle.asn1.x509.GeneralName.uniformResourceIdentifier, "spiffe://test/ops"))
                .writePem(dir.resolve("ops.crt"), dir.resolve("ops.key"));
        server = TestServer.start(Map.of("leasehold.tls.bundle", "p",
                "leasehold.tls.client-auth", "need",
                // (a subject would need '=' in the name: not possible in a --name=value argument)
                "leasehold.acl[uri:spiffe://test/ops]", "ops/",
                "spring.ssl.bundle.pem.p.keystore.certificate", "file:" + dir.resolve("tls.crt"),
                "spring.ssl.bundle.pem.p.keystore.private-key", "file:" + dir.resolve("tls.key"),
                "spring.ssl.bundle.pem.p.truststore.certificate", "file:" + dir.resolve("ca.crt")));
    }

    @AfterAll
    void stop() {
        Logger.getLogger("dev.leasehold.client").setLevel(clientLogLevel);
        if (server != null) {
            server.close();
        }
        TestServer.deleteTree(dir);
    }

    @Test
    void mutualTlsFromOptionsOrEnvironment() {
        Result ping = run(Map.of(), "ping", "--cacert", file("ca.crt"), "--cert", file("ops.crt"), "--cert-key",
                file("ops.key"));
        assertThat(ping.code()).as(ping.err()).isZero();
        assertThat(ping.out()).startsWith("pong from ");

        Map<String, String> env = Map.of("LEASEHOLD_CACERT", file("ca.crt"), "LEASEHOLD_CERT", file("ops.crt"),
                "LEASEHOLD_CERT_KEY", file("ops.key"));
        Result acquired = run(env, "acquire", "--key", "ops/deploy", "--wait", "0", "--lease", "5s");
        assertThat(acquired.code()).as(acquired.err()).isZero();

        Result forbidden = run(env, "acquire", "--key", "billing/x", "--wait", "0");
        assertThat(forbidden.code()).isEqualTo(ExitCode.FORBIDDEN.code());
        assertThat(forbidden.err()).contains("forbidden: the server does not let this client use \"billing/x\"")
                .contains("forbidden key \"billing/x\"");
    }

    @Test
    void withoutAClientCertificateTheServerIsUnavailableAndHalfACertificateIsAUsageError() {
        Result noCert = run(Map.of(), "ping", "--cacert", file("ca.crt"), "--timeout", "1s");
        assertThat(noCert.code()).isNotZero();
        Result plaintext = run(Map.of(), "acquire", "--key", "ops/x", "--wait", "0", "--timeout", "1s");
        assertThat(plaintext.code()).isEqualTo(ExitCode.UNAVAILABLE.code());
        Result half = run(Map.of(), "ping", "--cert", file("ops.crt"));
        assertThat(half.code()).isEqualTo(ExitCode.USAGE.code());
        assertThat(half.err()).contains("--cert and --cert-key go together");
    }

    @Test
    void aCertificateFileThatDoesNotExistIsAUsageErrorSayingSo() {
        Result missingCa = run(Map.of(), "ping", "--cacert", file("missing.crt"));
        assertThat(missingCa.code()).isEqualTo(ExitCode.USAGE.code());
        assertThat(missingCa.err()).isEqualTo("leasehold ping: --cacert " + file("missing.crt") + ": file not found\n");
        Result missingKey = run(Map.of("LEASEHOLD_CERT", file("ops.crt"), "LEASEHOLD_CERT_KEY", file("ops.pem")),
                "ping", "--cacert", file("ca.crt"));
        assertThat(missingKey.code()).isEqualTo(ExitCode.USAGE.code());
        assertThat(missingKey.err()).contains("$LEASEHOLD_CERT_KEY " + file("ops.pem") + ": file not found");
    }

    private String file(String name) {
        return dir.resolve(name).toString();
    }

    private Result run(Map<String, String> env, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add(0, "--server=127.0.0.1:" + server.port());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(all.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    record Result(int code, String out, String err) {
    }
}
