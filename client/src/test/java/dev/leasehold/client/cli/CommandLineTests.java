package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** Parsing, durations, help and usage errors of the command line, in process and socket-free. */
class CommandLineTests {

    @Test
    void durationsHaveAUnitOrAreSeconds() throws Exception {
        assertThat(Durations.millis("--x", "500ms")).isEqualTo(500);
        assertThat(Durations.millis("--x", "30s")).isEqualTo(30_000);
        assertThat(Durations.millis("--x", "2m")).isEqualTo(120_000);
        assertThat(Durations.millis("--x", "7")).isEqualTo(7_000);
        assertThat(Durations.millis("--x", "0")).isZero();
        for (String bad : new String[] {"", "s", "-1s", "1h", "1.5s", "10 s", "ten", "1234567890s"}) {
            assertThatThrownBy(() -> Durations.millis("--wait", bad)).isInstanceOf(UsageException.class)
                    .hasMessage("bad duration for --wait: '" + bad + "' (use e.g. 500ms, 30s, 2m)");
        }
    }

    @Test
    void waitAndLeaseAreWholeSecondsInRange() throws Exception {
        assertThat(Durations.seconds("--wait", "0", 0, 255)).isZero();
        assertThat(Durations.seconds("--wait", "4m", 0, 255)).isEqualTo(240);
        assertThat(Durations.seconds("--lease", "2000ms", 1, 255)).isEqualTo(2);
        assertThatThrownBy(() -> Durations.seconds("--lease", "1500ms", 1, 255))
                .hasMessage("--lease must be whole seconds, not '1500ms'");
        assertThatThrownBy(() -> Durations.seconds("--lease", "0s", 1, 255))
                .hasMessage("--lease must be 1s to 255s, not '0s'");
        assertThatThrownBy(() -> Durations.seconds("--wait", "5m", 0, 255))
                .hasMessage("--wait must be 0s to 255s, not '5m'");
    }

    @Test
    void optionsGoBeforeOrAfterTheCommandWithASpaceOrAnEqualsSign() throws Exception {
        CommandLine line = CommandLine.parse(new String[] {"--server", "h:1", "run", "--key=k", "-v", "--wait",
                "0", "--", "sh", "-c", "--key x"});
        assertThat(line.command()).isEqualTo("run");
        assertThat(line.value("--server")).isEqualTo("h:1");
        assertThat(line.value("--key")).isEqualTo("k");
        assertThat(line.value("--wait")).isEqualTo("0");
        assertThat(line.has("--verbose")).isTrue();
        assertThat(line.tail()).containsExactly("sh", "-c", "--key x");

        CommandLine after = CommandLine.parse(new String[] {"ping", "--json", "--timeout=2s", "--server", "a,b"});
        assertThat(after.has("--json")).isTrue();
        assertThat(after.value("--timeout")).isEqualTo("2s");
        assertThat(after.value("--server")).isEqualTo("a,b");
    }

    @Test
    void mistakesSayWhatIsWrong() {
        assertUsage("unknown command 'lock'", "lock");
        assertUsage("missing command", "--json");
        assertUsage("unknown option --bogus for acquire", "acquire", "--bogus");
        assertUsage("--key needs a value", "acquire", "--key");
        assertUsage("--key is given twice", "acquire", "--key", "a", "--key", "b");
        assertUsage("--json takes no value", "ping", "--json=yes");
        assertUsage("--key goes after the command", "--key", "k", "run");
        // the example names a command that takes the option
        assertUsage("--http goes after the command, as in leasehold inspect --http ... (commands that take it: "
                + "inspect, top, cluster, admin)", "--http", "http://x", "ping");
        assertUsage("--kill-grace goes after the command, as in leasehold run --kill-grace ...", "--kill-grace", "5s", "ping");
        assertUsage("'--' is only for run", "acquire", "--key", "k", "--", "x");
        assertUsage("put the command to run after '--'", "run", "--key", "k", "./job.sh");
        assertUsage("--json is not an option of run", "run", "--json", "--key", "k", "--", "true");
        assertUsage("--json is not an option of run", "--json", "run", "--key", "k", "--", "true");
        assertUsage("unexpected argument 'x'", "ping", "x");
        assertUsage("unexpected argument 'orders/42': the key goes in --key, as in leasehold acquire --key orders/42",
                "acquire", "orders/42");
        assertUsage("the key goes in --key, as in leasehold run --key orders/43 -- COMMAND",
                "run", "orders/43", "--", "echo", "hi");
        assertUsage("put the command to run after '--'", "run", "./job.sh", "--key", "k");
        assertUsage("put the command to run after '--', as in leasehold elect --key K -- ./leader.sh", "elect",
                "--key", "k", "./leader.sh");
        assertUsage("the key goes in --key, as in leasehold elect --key lead -- COMMAND", "elect", "lead", "--",
                "true");
    }

    @Test
    void helpWorksEvenWithOtherMistakes() throws Exception {
        assertThat(CommandLine.parse(new String[] {"run", "--bogus", "--help"}).command()).isEqualTo("run");
        assertThat(CommandLine.parse(new String[] {"help"}).has("--help")).isTrue();
        assertThat(CommandLine.parse(new String[] {"-h", "release"}).command()).isEqualTo("release");
    }

    @Test
    void everyCommandHasHelpOnStdoutAndExitsZero() {
        for (String command : CommandLine.COMMANDS) {
            Run r = run(command, "--help");
            assertThat(r.code).isZero();
            assertThat(r.out).startsWith("usage: leasehold " + command).contains("Exit codes:");
            assertThat(r.err).isEmpty();
        }
        Run main = run("--help");
        assertThat(main.code).isZero();
        assertThat(main.out).startsWith("usage: leasehold").contains("run").contains("LEASEHOLD_SERVER");
    }

    @Test
    void usageErrorsAreOneLineOnStderrWithExitCode64() {
        Object[][] cases = {
            {new String[] {}, "leasehold: missing command; commands are run, elect, acquire, release, extend,"
                    + " ping, check, inspect, top, observe, cluster, admin (see leasehold --help)"},
            {new String[] {"cluster"},
                "leasehold cluster: missing what to do: members, add, remove or replace (see leasehold cluster --help)"},
            {new String[] {"cluster", "grow"}, "leasehold cluster: unknown cluster action 'grow': members, add, remove"
                    + " or replace (see leasehold cluster --help)"},
            {new String[] {"cluster", "add", "n4", "--client-address", "h:7420"},
                "leasehold cluster: add needs --raft-address HOST:PORT (the new node's Raft port)"},
            {new String[] {"cluster", "replace", "n2", "--raft-address", "h:7430", "--client-address", "h:7420"},
                "leasehold cluster: replace needs the new node's id after the old one"},
            {new String[] {"cluster", "remove", "n2", "n3", "n4", "n5"}, null},
            {new String[] {"cluster", "members", "n1"}, "leasehold cluster: members takes no arguments"},
            {new String[] {"check", "k", "1", "2"},
                "leasehold check: unexpected argument '2' (see leasehold check --help)"},
            {new String[] {"check", "k"}, "leasehold check: check needs --token (see leasehold check --help)"},
            {new String[] {"inspect", "k", "--key", "j"}, null},
            {new String[] {"top", "--n", "101"}, null},
            {new String[] {"acquire", "--key", "k", "--wait", "3x"},
                "leasehold acquire: bad duration for --wait: '3x' (use e.g. 500ms, 30s, 2m)"},
            {new String[] {"acquire"}, "leasehold acquire: acquire needs --key (see leasehold acquire --help)"},
            {new String[] {"acquire", "--key", ""}, "leasehold acquire: bad --key: key is empty"},
            {new String[] {"acquire", "--key", "a\nb"}, null},
            {new String[] {"release", "--key", "k", "--token", "abc"}, null},
            {new String[] {"release", "--key", "k", "--token", "0"}, null},
            {new String[] {"ping", "--timeout", "0s"}, null},
            {new String[] {"ping", "--timeout", "5m"}, null},
            {new String[] {"ping", "--server", "host:99999"}, null},
            {new String[] {"run", "--key", "k", "--lease", "3s", "--", "true"}, null},
            {new String[] {"run", "--key", "k"}, null},
            {new String[] {"acquire", "--key", "k", "--shared", "--value", "n1"},
                "leasehold acquire: --value goes with an exclusive acquire, not with --shared"},
            {new String[] {"acquire", "--key", "k", "--value", "x".repeat(1025)},
                "leasehold acquire: --value is 1025 bytes; a value is at most 1024"},
            {new String[] {"observe"}, "leasehold observe: observe needs --key (see leasehold observe --help)"},
            {new String[] {"observe", "k", "--value", "v"}, "leasehold observe: unknown option --value for observe"
                    + " (see leasehold observe --help)"},
            {new String[] {"ping", "--once"}, null},
            {new String[] {"elect", "--key", "k"}, "leasehold elect: elect needs a command after '--', as in"
                    + " leasehold elect --key K -- ./leader.sh (see leasehold elect --help)"},
            {new String[] {"elect", "--key", "k", "--identity", "", "--", "true"},
                "leasehold elect: --identity must be 1 to 1024 UTF-8 bytes (it is the grant's value)"},
            {new String[] {"elect", "--key", "k", "--lease", "3s", "--", "true"}, null},
            {new String[] {"elect", "--key", "k", "--wait", "2h", "--", "true"}, null},
            {new String[] {"elect", "--key", "k", "--wait", "0", "--", "true"}, "leasehold elect: --wait must be more"
                    + " than 0 for elect: a candidate waits in the queue (without --wait, as long as it takes)"},
            {new String[] {"elect", "--key", "k", "--shared", "--", "true"}, null},
        };
        for (Object[] c : cases) {
            Run r = run((String[]) c[0]);
            assertThat(r.code).as(String.join(" ", (String[]) c[0])).isEqualTo(64);
            assertThat(r.out).isEmpty();
            assertThat(r.err).startsWith("leasehold").hasLineCount(1);
            if (c[1] != null) {
                assertThat(r.err).isEqualTo(c[1] + "\n");
            }
        }
    }

    @Test
    void theKillGraceMustLeaveTimeBeforeTheLeaseEnds() throws Exception {
        // lease 3 s: safety 300 ms, so kill-grace + 300 ms <= 2 s
        Run tooLong = run("run", "--key", "k", "--lease", "3s", "--kill-grace", "1800ms", "--", "true");
        assertThat(tooLong.err).contains("--kill-grace can be at most 1.7s");
        Context ctx = new Context(CommandLine.parse(new String[] {"run", "--key", "k", "--lease", "3s",
            "--kill-grace", "1700ms", "--", "true"}), System.out, System.err, Map.of());
        new RunCommand(ctx); // fits
        Run defaults = run("run", "--key", "k", "--lease", "7s", "--", "true");
        assertThat(defaults.err).contains("--kill-grace 5s does not fit a 7s lease");
    }

    @Test
    void electsKillGraceMustLeaveTimeBeforeTheTermEnds() throws Exception {
        // lease 3 s: safety 300 ms, the term ends a safety before the ticket's validity, so kill-grace + 600 ms <= 2 s
        Run tooLong = run("elect", "--key", "k", "--lease", "3s", "--kill-grace", "1500ms", "--", "true");
        assertThat(tooLong.code).isEqualTo(64);
        assertThat(tooLong.err).contains("--kill-grace can be at most 1.4s");
        new ElectCommand(new Context(CommandLine.parse(new String[] {"elect", "--key", "k", "--lease", "3s",
            "--kill-grace", "1400ms", "--", "true"}), System.out, System.err, Map.of())); // fits
        new ElectCommand(new Context(CommandLine.parse(new String[] {"elect", "--key", "k", "--", "true"}),
                System.out, System.err, Map.of())); // the defaults fit: lease 15 s, kill-grace 5 s
        Run shortLease = run("elect", "--key", "k", "--lease", "9s", "--", "true");
        assertThat(shortLease.err).contains("--kill-grace 5s does not fit a 9s lease");
    }

    @Test
    void theServerComesFromTheOptionThenTheEnvironmentThenTheDefault() throws Exception {
        CommandLine ping = CommandLine.parse(new String[] {"ping"});
        assertThat(new Context(ping, System.out, System.err, Map.of()).servers()).isEqualTo("127.0.0.1:7420");
        assertThat(new Context(ping, System.out, System.err, Map.of("LEASEHOLD_SERVER", " h:9 ")).servers())
                .isEqualTo("h:9");
        CommandLine explicit = CommandLine.parse(new String[] {"ping", "--server", "x:1"});
        assertThat(new Context(explicit, System.out, System.err, Map.of("LEASEHOLD_SERVER", "h:9")).servers())
                .isEqualTo("x:1");
    }

    @Test
    void jsonEscapesWhatItMust() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("outcome", "acquired");
        m.put("key", "a\"b\\c\nd\u0001é");
        m.put("token", Context.unsigned(-1L));
        m.put("n", 3);
        m.put("none", null);
        assertThat(Json.object(m)).isEqualTo("{\"outcome\":\"acquired\",\"key\":\"a\\\"b\\\\c\\nd\\u0001é\","
                + "\"token\":18446744073709551615,\"n\":3,\"none\":null}");
    }

    @Test
    void epochMillisRoundDown() {
        long now = System.currentTimeMillis();
        long in10s = Context.epochMillis(System.nanoTime() + 10_000_000_000L);
        assertThat(in10s).isBetween(now + 9_900, System.currentTimeMillis() + 10_000);
    }

    private static void assertUsage(String message, String... args) {
        assertThatThrownBy(() -> CommandLine.parse(args)).isInstanceOf(UsageException.class)
                .hasMessageContaining(message);
    }

    private record Run(int code, String out, String err) {
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
