package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.Ticket;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * {@code leasehold observe} and {@code --value} as a real separate process against a real server
 * (PROTOCOL.md 9.15, 9.16): the first event with {@code --once}, for people and as JSON; a running
 * observer's lines as the key changes; a value taken on the command line, seen by the observer.
 */
class CliObserveIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    @TempDir
    Path dir;

    private Map<String, String> env() {
        return Map.of("LEASEHOLD_SERVER", "127.0.0.1:" + server.port());
    }

    @Test
    void onceShowsTheCurrentHolderAndItsValue() throws Exception {
        CliProcess cli = new CliProcess(dir);
        var acquired = cli.run(env(), "acquire", "--key", "cli/lead", "--value", "10.0.0.7:8080", "--lease", "60s");
        assertThat(acquired.exitCode()).as(acquired.err()).isZero();
        var once = cli.run(env(), "observe", "cli/lead", "--once");
        assertThat(once.exitCode()).as(once.err()).isZero();
        assertThat(once.out()).matches("\"cli/lead\" held token \\d+ value \"10\\.0\\.0\\.7:8080\" \\(current\\)\\n");
        var json = cli.run(env(), "observe", "--key", "cli/lead", "--once", "--json");
        assertThat(json.out()).contains("\"outcome\":\"event\"").contains("\"state\":\"held\"")
                .contains("\"cause\":\"current\"").contains("\"value\":\"10.0.0.7:8080\"").hasLineCount(1);
        var shared = cli.run(env(), "acquire", "--key", "cli/r", "--shared", "--value", "x");
        assertThat(shared.exitCode()).isEqualTo(64);
    }

    @Test
    void aRunningObserverPrintsEachChange() throws Exception {
        CliProcess cli = new CliProcess(dir);
        CliProcess.Started observer = cli.start(env(), "observe", "cli/changes");
        awaitLine(observer, "(current)");
        // Each change after the previous line: changes faster than the printing would be coalesced.
        Ticket t = ((AcquireOutcome.Acquired) server.client().acquire("cli/changes", 0, 30)).ticket();
        awaitLine(observer, "(grant)");
        t.proclaim("n2");
        awaitLine(observer, "(value set)");
        t.release();
        awaitLine(observer, "(release)");
        String token = Long.toUnsignedString(t.token());
        observer.process().destroy();
        assertThat(Files.readString(observer.out(), StandardCharsets.UTF_8)).isEqualTo(
                "\"cli/changes\" free token 0 (current)\n"
                + "\"cli/changes\" held token " + token + " (grant)\n"
                + "\"cli/changes\" held token " + token + " value \"n2\" (value set)\n"
                + "\"cli/changes\" free token " + token + " (release)\n");
    }

    private static void awaitLine(CliProcess.Started observer, String ending) {
        Wait.until("a line ending " + ending, Duration.ofSeconds(20),
                () -> Files.readString(observer.out(), StandardCharsets.UTF_8), out -> out.contains(ending + "\n"));
    }
}
