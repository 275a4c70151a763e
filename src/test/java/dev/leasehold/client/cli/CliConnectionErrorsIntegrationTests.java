package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import dev.leasehold.testing.TestPki;
import dev.leasehold.testing.TestServer;

/**
 * The command line says why it cannot connect as soon as every server has failed once, not at
 * the end of its deadline: each case gives it 30 s (--timeout or --wait) and must answer well
 * before. Real CLI processes; a real TLS server for the plaintext-against-TLS case.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliConnectionErrorsIntegrationTests {

    /** Far below the 30 s the commands are given, far above a JVM start on a loaded machine. */
    private static final long AT_ONCE_MILLIS = 20_000;

    Path dir;
    TestServer tls;
    CliProcess cli;
    int refused;

    @BeforeAll
    void start() throws Exception {
        dir = Files.createTempDirectory("leasehold-cli-connect");
        TestPki ca = TestPki.ca("CLI connect CA");
        ca.server("leasehold").writePem(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        tls = TestServer.start(Map.of("leasehold.tls.bundle", "p",
                "spring.ssl.bundle.pem.p.keystore.certificate", "file:" + dir.resolve("tls.crt"),
                "spring.ssl.bundle.pem.p.keystore.private-key", "file:" + dir.resolve("tls.key")));
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            refused = s.getLocalPort(); // closed again: nothing listens there now
        }
        cli = new CliProcess(dir);
    }

    @AfterEach
    void killCli() {
        cli.killAll();
    }

    @AfterAll
    void stop() throws Exception {
        if (tls != null) {
            tls.close();
        }
        TestServer.deleteTree(dir);
    }

    private record Timed(CliProcess.Result result, long millis) {
    }

    private Timed run(String... args) throws Exception {
        long t0 = System.nanoTime();
        CliProcess.Result r = cli.run(args);
        return new Timed(r, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    }

    @Test
    void pingToAPortWhereNothingListensSaysRefusedAtOnceWithTheAddressAsTyped() throws Exception {
        Timed t = run("ping", "--server", "127.0.0.1:" + refused, "--timeout", "30s");
        assertThat(t.result().exitCode()).as(t.result().err()).isEqualTo(ExitCode.UNAVAILABLE.code());
        assertThat(t.result().err()).contains("could not connect to 127.0.0.1:" + refused + ": Connection refused")
                .doesNotContain("<unresolved>").doesNotContain("no Pong");
        assertThat(t.millis()).as("answered at once, not after --timeout 30s").isLessThan(AT_ONCE_MILLIS);
    }

    @Test
    void acquireDoesNotWaitItsWholeWaitForARefusedConnection() throws Exception {
        Timed t = run("acquire", "--key", "k", "--wait", "30s", "--server", "127.0.0.1:" + refused);
        assertThat(t.result().exitCode()).as(t.result().err()).isEqualTo(ExitCode.UNAVAILABLE.code());
        assertThat(t.result().err()).contains("Connection refused").doesNotContain("<unresolved>");
        assertThat(t.millis()).as("answered at once, not after --wait 30s").isLessThan(AT_ONCE_MILLIS);
    }

    @Test
    void anUnknownHostIsNamed() throws Exception {
        Timed t = run("ping", "--server", "no-such-host.invalid:7420", "--timeout", "30s");
        assertThat(t.result().exitCode()).as(t.result().err()).isEqualTo(ExitCode.UNAVAILABLE.code());
        assertThat(t.result().err()).contains("unknown host no-such-host.invalid");
        assertThat(t.millis()).isLessThan(AT_ONCE_MILLIS);
    }

    @Test
    void plaintextAgainstATlsServerSaysWhatTheClosedConnectionLikelyMeans() throws Exception {
        Timed t = run("ping", "--server", "127.0.0.1:" + tls.port(), "--timeout", "30s");
        assertThat(t.result().exitCode()).as(t.result().err()).isEqualTo(ExitCode.UNAVAILABLE.code());
        // Netty's TLS server closes on plaintext without an alert: the line says what that likely means
        assertThat(t.result().err()).contains("closed the connection before answering")
                .contains("a TLS server does that to a plaintext client").contains("--tls");
        assertThat(t.millis()).isLessThan(AT_ONCE_MILLIS);
    }

    @Test
    void verboseShowsEachAttempt() throws Exception {
        Timed t = run("ping", "-v", "--server", "127.0.0.1:" + refused + ",no-such-host.invalid:7420",
                "--timeout", "30s");
        assertThat(t.result().exitCode()).as(t.result().err()).isEqualTo(ExitCode.UNAVAILABLE.code());
        assertThat(t.result().err()).contains("connecting to 127.0.0.1:" + refused + " failed")
                .contains("connecting to no-such-host.invalid:7420 failed: unknown host no-such-host.invalid");
        assertThat(t.millis()).isLessThan(AT_ONCE_MILLIS);
    }
}
