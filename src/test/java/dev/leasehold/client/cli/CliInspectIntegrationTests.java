package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.Ticket;
import dev.leasehold.testing.TestServer;

/**
 * {@code leasehold inspect}, {@code top} and {@code check} as a real separate process against a
 * real server whose {@code locks} endpoint is exposed: for people, with {@code --json}, and
 * their exit codes.
 */
class CliInspectIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass(
            Map.of("management.endpoints.web.exposure.include", "health,locks"));

    @TempDir
    Path dir;

    private Map<String, String> env() {
        return Map.of("LEASEHOLD_SERVER", "127.0.0.1:" + server.port());
    }

    private String http() {
        return "http://127.0.0.1:" + server.httpPort();
    }

    @Test
    void inspectShowsTheSharedModeTheLimitEveryHolderAndTheWaiterKinds() throws Exception {
        CliProcess cli = new CliProcess(dir);
        Ticket r1 = ((AcquireOutcome.Acquired) server.client().acquireShared("cfg/shared", 3, 0, 60)).ticket();
        Ticket r2 = ((AcquireOutcome.Acquired) server.client().acquireShared("cfg/shared", 3, 0, 60)).ticket();
        var inspect = cli.run(env(), "inspect", "cfg/shared", "--http", http());
        assertThat(inspect.exitCode()).as(inspect.err()).isZero();
        assertThat(inspect.out()).startsWith("\"cfg/shared\" shared\n  shared, limit 3, 2 holders\n    token "
                + Long.toUnsignedString(r1.token()) + ", granted ")
                .contains("    token " + Long.toUnsignedString(r2.token()) + ", granted ");
        var json = cli.run(env(), "inspect", "--key", "cfg/shared", "--http", http(), "--json");
        assertThat(json.out()).contains("\"mode\":\"shared\"").contains("\"limit\":3").contains("\"sharedHolders\":[");
        r1.release();
        r2.release();
    }

    /** PROTOCOL.md 17.2: the holder's value next to its token, as text (escaped as keys are) or hex. */
    @Test
    void inspectShowsTheHoldersValueAsTextOrHex() throws Exception {
        CliProcess cli = new CliProcess(dir);
        try (dev.leasehold.testing.RawClient raw = new dev.leasehold.testing.RawClient(server.port())) {
            byte[] key = dev.leasehold.protocol.Request.key("lead/cli");
            var granted = (dev.leasehold.protocol.Answer.Acquired) raw.send(new dev.leasehold.protocol.Request.MilliAcquire(
                    0, 0, 60, 1, 0, "n1\tleader".getBytes(java.nio.charset.StandardCharsets.UTF_8), key)).next();
            var inspect = cli.run(env(), "inspect", "lead/cli", "--http", http());
            assertThat(inspect.exitCode()).as(inspect.err()).isZero();
            assertThat(inspect.out()).contains("left (longest requested 60s)\n  value \"n1\\u0009leader\"\n  holder ");
            var json = cli.run(env(), "inspect", "--key", "lead/cli", "--http", http(), "--json");
            assertThat(json.out()).contains("\"value\":\"n1\\tleader\",\"valueEncoding\":\"utf-8\"");
            raw.send(new dev.leasehold.protocol.Request.SetValue(granted.token(), new byte[] {(byte) 0xC3, 0x28}, key)).next();
            var hex = cli.run(env(), "inspect", "lead/cli", "--http", http());
            assertThat(hex.out()).contains("\n  value 0xc328 (hex)\n");
            raw.send(new dev.leasehold.protocol.Request.Release(granted.token(), key)).next();
        }
    }

    @Test
    void inspectTopAndCheckForPeopleAndScripts() throws Exception {
        CliProcess cli = new CliProcess(dir);
        Ticket ticket = ((AcquireOutcome.Acquired) server.client().acquire("orders/42", 0, 60)).ticket();
        String token = Long.toUnsignedString(ticket.token());

        var inspect = cli.run(env(), "inspect", "orders/42", "--http", http());
        System.out.println("leasehold inspect orders/42:\n" + inspect.out());
        assertThat(inspect.exitCode()).as(inspect.err()).isZero();
        assertThat(inspect.out()).startsWith("\"orders/42\" held\n  token " + token + ", granted ")
                .contains("left (longest requested 60s)\n  holder 127.0.0.1:").endsWith("  0 waiters\n");

        var json = cli.run(env(), "inspect", "--key", "orders/42", "--http", http(), "--json");
        assertThat(json.exitCode()).isZero();
        assertThat(json.out()).startsWith("{\"serving\":true,\"key\":\"orders/42\",\"state\":\"held\",\"token\":\""
                + token + "\"").hasLineCount(1);

        var top = cli.run(env(), "top", "--n", "3", "--http", http());
        System.out.println("leasehold top --n 3:\n" + top.out());
        assertThat(top.exitCode()).as(top.err()).isZero();
        assertThat(top.out()).startsWith("scanned ").contains("\nlongest queues: none\n")
                .contains("\nheld longest:\n\"orders/42\" held\n");

        var current = cli.run(env(), "check", "orders/42", token);
        assertThat(current.exitCode()).as(current.err()).isZero();
        assertThat(current.out()).isEqualTo("current: token " + token + " is the active grant of \"orders/42\"\n");
        ticket.release();
        var notCurrent = cli.run(env(), "check", "orders/42", token, "--json");
        assertThat(notCurrent.exitCode()).isEqualTo(70);
        assertThat(notCurrent.out())
                .isEqualTo("{\"outcome\":\"not_current\",\"key\":\"orders/42\",\"token\":" + token + "}\n");

        var free = cli.run(env(), "inspect", "orders/42", "--http", http());
        assertThat(free.out()).isEqualTo("\"orders/42\" free\n  0 waiters\n");
    }

    @Test
    void anUnreachableOrUnexposedEndpointIsUnavailable() throws Exception {
        CliProcess cli = new CliProcess(dir);
        var unexposed = cli.run(env(), "inspect", "k", "--http", "http://127.0.0.1:" + server.httpPort() + "/nothing");
        assertThat(unexposed.exitCode()).isEqualTo(68);
        assertThat(unexposed.err()).contains("does not expose the locks endpoint").hasLineCount(1);
        var badN = cli.run(env(), "top", "--n", "0", "--http", http());
        assertThat(badN.exitCode()).isEqualTo(64);
    }
}
