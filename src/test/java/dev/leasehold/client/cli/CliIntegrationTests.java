package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Ticket;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The {@code leasehold} command line as a real separate process against a real server: runs on
 * one key take turns, the command sees its token, a lost lease stops the command before its
 * validity ends, and every outcome has its exit code.
 */
class CliIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    @TempDir
    Path dir;

    private CliProcess cli;

    @BeforeEach
    void setUp() {
        cli = new CliProcess(dir);
    }

    @AfterEach
    void cleanUp() {
        cli.killAll();
    }

    private String server() {
        return "127.0.0.1:" + server.port();
    }

    private Map<String, String> env() {
        return Map.of("DIR", dir.toString(), "LEASEHOLD_SERVER", server());
    }

    @Test
    void twoRunsOnOneKeyTakeTurns() throws Exception {
        String script = String.join("\n",
                "if ! mkdir \"$DIR/inside\" 2>/dev/null; then echo OVERLAP >> \"$DIR/log\"; fi",
                "echo \"start $LEASEHOLD_TOKEN $(date +%s%3N)\" >> \"$DIR/log\"",
                "sleep 1",
                "echo \"end $LEASEHOLD_TOKEN $(date +%s%3N)\" >> \"$DIR/log\"",
                "rmdir \"$DIR/inside\"");
        var first = cli.start(env(), "run", "--key", "turns", "--wait", "20s", "--lease", "5s", "--kill-grace", "1s",
                "--", "/bin/sh", "-c", script);
        var second = cli.start(env(), "run", "--key", "turns", "--wait", "20s", "--lease", "5s", "--kill-grace",
                "1s", "--", "/bin/sh", "-c", script);

        assertThat(first.await().exitCode()).isZero();
        assertThat(second.await().exitCode()).isZero();
        List<String> log = Files.readAllLines(dir.resolve("log"));
        assertThat(log).hasSize(4).doesNotContain("OVERLAP");
        // start A, end A, start B, end B: the same token starts and ends, the next starts after
        String[] s1 = log.get(0).split(" ");
        String[] e1 = log.get(1).split(" ");
        String[] s2 = log.get(2).split(" ");
        String[] e2 = log.get(3).split(" ");
        assertThat(new String[] {s1[0], e1[0], s2[0], e2[0]}).containsExactly("start", "end", "start", "end");
        assertThat(e1[1]).isEqualTo(s1[1]);
        assertThat(e2[1]).isEqualTo(s2[1]);
        assertThat(Long.parseLong(s2[1])).isGreaterThan(Long.parseLong(s1[1]));
        assertThat(Long.parseLong(s2[2])).isGreaterThanOrEqualTo(Long.parseLong(e1[2]));
    }

    @Test
    void sharedRunsHoldTogetherUpToTheirLimitAndAnotherLimitIsExit73() throws Exception {
        String script = String.join("\n",
                "echo \"in $LEASEHOLD_TOKEN\" >> \"$DIR/shared\"",
                "while [ ! -f \"$DIR/go\" ]; do sleep 0.05; done");
        var a = cli.start(env(), "run", "--shared", "--limit", "2", "--key", "sem", "--wait", "20s", "--lease", "10s",
                "--kill-grace", "1s", "--", "/bin/sh", "-c", script);
        var b = cli.start(env(), "run", "--shared", "--limit", "2", "--key", "sem", "--wait", "20s", "--lease", "10s",
                "--kill-grace", "1s", "--", "/bin/sh", "-c", script);
        Wait.until("both --shared --limit 2 runs inside their command at once (lines in " + dir.resolve("shared") + ")",
                Duration.ofSeconds(30), () -> Files.exists(dir.resolve("shared")) ? Files.readAllLines(dir.resolve("shared")).size() : 0,
                n -> n == 2);
        var third = cli.run(env(), "acquire", "--shared", "--limit", "2", "--key", "sem", "--wait", "0s", "--json");
        assertThat(third.exitCode()).as("both permits held at once: the third times out").isEqualTo(65);
        var mismatch = cli.run(env(), "acquire", "--shared", "--limit", "3", "--key", "sem", "--wait", "0s");
        assertThat(mismatch.exitCode()).as(mismatch.err()).isEqualTo(74);
        assertThat(mismatch.err()).contains("--limit 2").contains("not 3");
        Files.createFile(dir.resolve("go"));
        assertThat(a.await().exitCode()).isZero();
        assertThat(b.await().exitCode()).isZero();
        var usage = cli.run(env(), "acquire", "--limit", "2", "--key", "sem");
        assertThat(usage.exitCode()).isEqualTo(64);
        assertThat(usage.err()).contains("--limit goes with --shared");
    }

    @Test
    void theCommandSeesKeyTokenAndValidityAndItsExitCodePassesThroughAndTheLockIsReleased() throws Exception {
        long before = System.currentTimeMillis();
        var r = cli.run(env(), "run", "--key", "env/ü", "--lease", "20s", "--", "/bin/sh", "-c",
                "echo \"$LEASEHOLD_KEY|$LEASEHOLD_TOKEN|$LEASEHOLD_VALID_UNTIL_MS\" > \"$DIR/env\"; exit 7");

        assertThat(r.exitCode()).as(r.err()).isEqualTo(7);
        assertThat(r.err()).isEmpty();
        String[] seen = Files.readString(dir.resolve("env")).trim().split("\\|");
        assertThat(seen[0]).isEqualTo("env/ü");
        long token = Long.parseLong(seen[1]);
        assertThat(token).isPositive();
        long validUntil = Long.parseLong(seen[2]);
        assertThat(validUntil).isBetween(before + 20_000 - 3_000, System.currentTimeMillis() + 20_000);
        // released when the command exited: free at once, with a later token
        var again = server.client().acquire("env/ü", 0, 5);
        assertThat(again).isInstanceOf(AcquireOutcome.Acquired.class);
        try (Ticket t = ((AcquireOutcome.Acquired) again).ticket()) {
            assertThat(t.token()).isGreaterThan(token);
        }
    }

    @Test
    void aLostLeaseStopsTheCommandBeforeItsValidityEnds() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(server.port())) {
            // The command ignores SIGTERM, so only the SIGKILL after --kill-grace ends it. Lease 8 s:
            // SIGTERM at V - 1.3 s, SIGKILL at V - 800 ms (safety = lease / 10).
            var run = cli.start(Map.of("DIR", dir.toString()), "--verbose", "--server", "127.0.0.1:" + proxy.port(),
                    "--timeout", "1s", "run", "--key", "lost", "--wait", "0", "--lease", "8s", "--kill-grace",
                    "500ms", "--", "/bin/sh", "-c",
                    "trap '' TERM; echo $LEASEHOLD_VALID_UNTIL_MS > \"$DIR/valid\"; echo $$ > \"$DIR/pid\"; "
                            + "while :; do sleep 0.05; done");
            long pid = awaitPid(dir.resolve("pid"), run);
            // The server becomes unreachable: no extend can be confirmed any more.
            proxy.stallClientToServer(true);
            proxy.stallServerToClient(true);
            // Someone else waits for the key, directly: the server grants it when the lease ends.
            AtomicLong grantedAt = new AtomicLong();
            CompletableFuture<AcquireOutcome> next = server.client().acquireAsync("lost", 15, 5)
                    .whenComplete((o, e) -> grantedAt.set(System.currentTimeMillis()));

            ProcessHandle child = ProcessHandle.of(pid).orElseThrow();
            long deadAt = 0;
            try {
                child.onExit().get(15, TimeUnit.SECONDS);
                deadAt = System.currentTimeMillis();
            } catch (TimeoutException stillAlive) {
                // deadAt stays 0: asserted below
            }
            var r = run.await();

            assertThat(deadAt).as("the command was stopped").isPositive();
            long validUntil = latestValidity(Long.parseLong(Files.readString(dir.resolve("valid")).trim()), r.err());
            System.out.println("lost lease: the command was seen dead " + (validUntil - deadAt)
                    + " ms before the validity ended (planned SIGKILL: 800 ms before)");
            assertThat(deadAt).as("the command died before the lock's validity ended").isLessThan(validUntil);
            assertThat(r.exitCode()).as(r.err()).isEqualTo(69);
            assertThat(r.err()).contains("lock lost").contains("sent SIGKILL");
            assertThat(next.get(20, TimeUnit.SECONDS)).isInstanceOf(AcquireOutcome.Acquired.class);
            assertThat(grantedAt.get()).as("the next holder came after the command was dead")
                    .isGreaterThanOrEqualTo(deadAt);
            ((AcquireOutcome.Acquired) next.get()).ticket().release();
        }
    }

    @Test
    void aSigtermToTheCommandLineStopsTheCommandAndReleases() throws Exception {
        var run = cli.start(env(), "run", "--key", "signal", "--kill-grace", "1s", "--", "/bin/sh", "-c",
                "echo $$ > \"$DIR/pid\"; sleep 30");
        long pid = awaitPid(dir.resolve("pid"), run);

        run.process().destroy(); // SIGTERM
        var r = run.await();

        assertThat(r.exitCode()).isEqualTo(143);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        assertThat(server.client().acquire("signal", 0, 5)).as("released").isInstanceOf(AcquireOutcome.Acquired.class);
    }

    @Test
    void runExitCodes() throws Exception {
        try (Ticket held = ((AcquireOutcome.Acquired) server.client().acquire("taken", 0, 30)).ticket()) {
            var timedOut = cli.run(env(), "run", "--key", "taken", "--wait", "1s", "--", "/bin/sh", "-c",
                    "touch \"$DIR/ran\"");
            assertThat(timedOut.exitCode()).isEqualTo(65);
            assertThat(timedOut.err()).startsWith("leasehold: timed out").hasLineCount(1);
            assertThat(dir.resolve("ran")).doesNotExist();
        }

        var cannotStart = cli.run(env(), "run", "--key", "nostart", "--", dir.resolve("missing").toString());
        assertThat(cannotStart.exitCode()).isEqualTo(127);
        assertThat(cannotStart.err()).contains("cannot start");
        assertThat(server.client().acquire("nostart", 0, 5)).as("released after the failed start")
                .isInstanceOf(AcquireOutcome.Acquired.class);

        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        var unavailable = cli.run("--server", "127.0.0.1:" + closedPort, "--timeout", "1s", "run", "--key", "k",
                "--wait", "0", "--", "/bin/true");
        assertThat(unavailable.exitCode()).isEqualTo(68);
        assertThat(unavailable.err()).startsWith("leasehold: unavailable").hasLineCount(1);

        var badDuration = cli.run(env(), "run", "--key", "k", "--wait", "ten", "--", "/bin/true");
        assertThat(badDuration.exitCode()).isEqualTo(64);
        assertThat(badDuration.err()).isEqualTo("leasehold run: bad duration for --wait: 'ten' (use e.g. 500ms, 30s, 2m)\n");

        var unknownFlag = cli.run(env(), "run", "--key", "k", "--frobnicate", "--", "/bin/true");
        assertThat(unknownFlag.exitCode()).isEqualTo(64);
        assertThat(unknownFlag.err()).contains("unknown option --frobnicate").hasLineCount(1);

        var help = cli.run("run", "--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("LEASEHOLD_VALID_UNTIL_MS").contains("--kill-grace");
    }

    @Test
    void busyWhenTheServerQueuesNoWaiters() throws Exception {
        try (TestServer strict = TestServer.start(Map.of("leasehold.max-waiters-per-key", "0"));
                LeaseholdClient direct = LeaseholdClient.create("127.0.0.1:" + strict.port())) {
            try (Ticket held = ((AcquireOutcome.Acquired) direct.acquire("full", 0, 30)).ticket()) {
                var busy = cli.run(Map.of("LEASEHOLD_SERVER", "127.0.0.1:" + strict.port()), "run", "--key", "full",
                        "--wait", "5s", "--", "/bin/true");
                assertThat(busy.exitCode()).isEqualTo(66);
                assertThat(busy.err()).startsWith("leasehold: busy").hasLineCount(1);

                var json = cli.run(Map.of("LEASEHOLD_SERVER", "127.0.0.1:" + strict.port()), "acquire", "--json",
                        "--key", "full", "--wait", "5s");
                assertThat(json.exitCode()).isEqualTo(66);
                assertThat(json.out()).isEqualTo("{\"outcome\":\"busy\",\"key\":\"full\"}\n");
            }
        }
    }

    @Test
    void indeterminateWhenNoAnswerComes() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(server.port())) {
            // the session's opening Pong (10 bytes) goes through, so the session comes up and the
            // acquire is sent; its answer cuts the connection
            proxy.cutServerToClientAfter(10);
            var r = cli.run("--server", "127.0.0.1:" + proxy.port(), "acquire", "--key", "silent", "--wait", "1s",
                    "--json");
            assertThat(r.exitCode()).isEqualTo(67);
            assertThat(r.out()).startsWith("{\"outcome\":\"indeterminate\",\"key\":\"silent\",\"reason\":");
        }
    }

    @Test
    void aMillisecondWaitIsSentToTheMillisecond() throws Exception {
        var held = server.client().acquire("cli-ms", 0, 30);
        assertThat(held).isInstanceOf(AcquireOutcome.Acquired.class);
        long start = System.nanoTime();
        var timedOut = cli.run(env(), "acquire", "--key", "cli-ms", "--wait", "250ms", "--json");
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        System.out.println("leasehold acquire --wait 250ms on a held key: exit " + timedOut.exitCode() + " after "
                + tookMs + " ms (with the JVM's start)");
        assertThat(timedOut.exitCode()).as(timedOut.err()).isEqualTo(65);
        assertThat(timedOut.out()).isEqualTo("{\"outcome\":\"timed_out\",\"key\":\"cli-ms\",\"wait_ms\":250}\n");
        ((AcquireOutcome.Acquired) held).ticket().release();
    }

    @Test
    void acquireExtendReleaseAndPingForScripts() throws Exception {
        var acquired = cli.run(env(), "acquire", "--key", "script", "--wait", "0", "--lease", "10s", "--json");
        assertThat(acquired.exitCode()).as(acquired.err()).isZero();
        Matcher m = Pattern.compile("\\{\"outcome\":\"acquired\",\"key\":\"script\",\"token\":(\\d+),"
                + "\"valid_until_ms\":(\\d+),\"lease_s\":10}\n").matcher(acquired.out());
        assertThat(m.matches()).as(acquired.out()).isTrue();
        String token = m.group(1);
        assertThat(server.client().acquire("script", 0, 5)).as("still held after the CLI exited")
                .isInstanceOf(AcquireOutcome.TimedOut.class);

        var timedOut = cli.run(env(), "acquire", "--key", "script", "--wait", "0", "--json");
        assertThat(timedOut.exitCode()).isEqualTo(65);
        assertThat(timedOut.out()).isEqualTo("{\"outcome\":\"timed_out\",\"key\":\"script\",\"wait_s\":0}\n");
        // T does not say whether the key is held or in its lock-delay: the line says either, never "someone else"
        var timedOutText = cli.run(env(), "acquire", "--key", "script", "--wait", "0");
        assertThat(timedOutText.exitCode()).isEqualTo(65);
        assertThat(timedOutText.err()).isEqualTo("leasehold: timed out: \"script\" is not free (--wait 0: one attempt): "
                + "it is held, or in its lock-delay after an expired lease\n");

        var extended = cli.run(env(), "extend", "--key", "script", "--token", token, "--lease", "60s");
        assertThat(extended.exitCode()).as(extended.err()).isZero();
        assertThat(extended.out()).startsWith("extended \"script\" token " + token + ", valid until ");

        var released = cli.run(env(), "release", "--key", "script", "--token", token, "--json");
        assertThat(released.exitCode()).isZero();
        assertThat(released.out())
                .isEqualTo("{\"outcome\":\"released\",\"key\":\"script\",\"token\":" + token + "}\n");

        var notHeld = cli.run(env(), "release", "--key", "script", "--token", token);
        assertThat(notHeld.exitCode()).isEqualTo(70);
        assertThat(notHeld.err()).startsWith("leasehold: not held: token " + token).hasLineCount(1);
        var notExtended = cli.run(env(), "extend", "--key", "script", "--token", token, "--json");
        assertThat(notExtended.exitCode()).isEqualTo(70);
        assertThat(notExtended.out()).startsWith("{\"outcome\":\"not_held\"");

        var pong = cli.run(env(), "ping");
        assertThat(pong.exitCode()).isZero();
        assertThat(pong.out()).startsWith("pong from " + server() + " in ");

        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        var noServer = cli.run("ping", "--json", "--timeout", "1s", "--server", "127.0.0.1:" + closedPort);
        assertThat(noServer.exitCode()).isEqualTo(68);
        assertThat(noServer.out()).startsWith("{\"outcome\":\"unavailable\",\"server\":\"127.0.0.1:" + closedPort);
        var noServerRelease = cli.run("release", "--key", "k", "--token", "1", "--timeout", "1s", "--server",
                "127.0.0.1:" + closedPort);
        assertThat(noServerRelease.exitCode()).isEqualTo(68);
        assertThat(noServerRelease.err()).startsWith("leasehold: unavailable").contains("nothing was sent");
    }

    /** Waits for the command to write its pid; fails early if the CLI ended first. */
    private long awaitPid(Path file, CliProcess.Started run) throws Exception {
        // Polls the CLI's output for the child's pid; no event to await. 60 s, was 10 s: the CLI is
        // a JVM of its own and a JVM start took 35 s at load average 14 (docs/testing.md).
        long pid = Wait.until("the CLI (pid " + run.process().pid() + ") to start its command and write the pid to "
                + file, Duration.ofSeconds(60), () -> {
                    String s = Files.exists(file) ? Files.readString(file).trim() : "";
                    if (s.isEmpty() && !run.process().isAlive()) {
                        throw Wait.giveUp("the CLI ended before its command started: " + run.stderr());
                    }
                    return s;
                }, s -> !s.isEmpty()).transform(Long::parseLong);
        cli.killLater(pid);
        return pid;
    }

    /** The command's validity as last reported: the env value, or a later confirmed extension. */
    private static long latestValidity(long initial, String stderr) {
        long latest = initial;
        Matcher m = Pattern.compile("extended .* \\(epoch ms (\\d+)\\)").matcher(stderr);
        while (m.find()) {
            latest = Math.max(latest, Long.parseLong(m.group(1)));
        }
        return latest;
    }
}
