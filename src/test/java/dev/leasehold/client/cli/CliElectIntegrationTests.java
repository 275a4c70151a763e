package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.Ticket;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code leasehold elect} as real separate processes against a real server: candidates take turns
 * with increasing terms and never overlap; a SIGTERM to the leader resigns (the next leads at once,
 * not after the lease); a SIGTERM to a waiting candidate withdraws it from the queue; the command's
 * exit code is the command line's; a lost term stops the command before the next leader is granted.
 */
class CliElectIntegrationTests {

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

    private Map<String, String> env() {
        return Map.of("DIR", dir.toString(), "LEASEHOLD_SERVER", "127.0.0.1:" + server.port());
    }

    /** One line per start and end: "start TERM IDENTITY KEY MILLIS"; "OVERLAP" if another was inside. */
    private static final String RECORD = String.join("\n",
            "if ! mkdir \"$DIR/inside\" 2>/dev/null; then echo OVERLAP >> \"$DIR/log\"; fi",
            "echo \"start $LEASEHOLD_TERM $LEASEHOLD_IDENTITY $LEASEHOLD_KEY $(date +%s%3N)\" >> \"$DIR/log\"",
            "sleep 1",
            "echo \"end $LEASEHOLD_TERM $LEASEHOLD_IDENTITY $LEASEHOLD_KEY $(date +%s%3N)\" >> \"$DIR/log\"",
            "rmdir \"$DIR/inside\"");

    @Test
    void twoCandidatesLeadInTurnWithIncreasingTermsThatNeverOverlap() throws Exception {
        var a = cli.start(env(), "elect", "--key", "turns", "--identity", "a", "--lease", "5s", "--kill-grace", "1s",
                "--", "/bin/sh", "-c", RECORD);
        var b = cli.start(env(), "elect", "--key", "turns", "--lease", "5s", "--kill-grace", "1s",
                "--", "/bin/sh", "-c", RECORD);

        assertThat(a.await().exitCode()).isZero();
        assertThat(b.await().exitCode()).isZero();
        List<String> log = Files.readAllLines(dir.resolve("log"));
        assertThat(log).hasSize(4).doesNotContain("OVERLAP");
        String[] s1 = log.get(0).split(" ");
        String[] e1 = log.get(1).split(" ");
        String[] s2 = log.get(2).split(" ");
        String[] e2 = log.get(3).split(" ");
        assertThat(new String[] {s1[0], e1[0], s2[0], e2[0]}).containsExactly("start", "end", "start", "end");
        assertThat(e1[1]).isEqualTo(s1[1]);
        assertThat(e2[1]).isEqualTo(s2[1]);
        assertThat(Long.parseLong(s2[1])).as("terms increase").isGreaterThan(Long.parseLong(s1[1]));
        assertThat(Long.parseLong(s2[4])).as("the second began after the first ended").isGreaterThanOrEqualTo(
                Long.parseLong(e1[4]));
        assertThat(s1[3]).isEqualTo("turns");
        // identities: "a", and the default hostname:pid of the other command line
        String defaultIdentity = s1[2].equals("a") ? s2[2] : s1[2];
        assertThat(List.of(s1[2], s2[2])).contains("a");
        assertThat(defaultIdentity).endsWith(":" + b.process().pid()).hasSizeGreaterThan((":" + b.process().pid()).length());
    }

    @Test
    void aSigtermToTheLeaderResignsAndTheNextLeadsAtOnce() throws Exception {
        // Lease 15 s: a handover that waited for the lease would take 15 s; a resign takes one round trip,
        // sent once the leader's command is dead.
        var leader = cli.start(env(), "elect", "--key", "handover", "--identity", "first", "--kill-grace", "1s",
                "--", "/bin/sh", "-c", "trap 'sleep 0.3; date +%s%3N > \"$DIR/end1\"; exit 0' TERM; "
                        + "echo $LEASEHOLD_TERM > \"$DIR/term1\"; echo $$ > \"$DIR/pid\"; while :; do sleep 0.05; done");
        long pid = awaitFile(dir.resolve("pid"), leader);
        cli.killLater(pid);
        var next = cli.start(env(), "elect", "--key", "handover", "--identity", "second", "--kill-grace", "1s",
                "--", "/bin/sh", "-c", "date +%s%3N > \"$DIR/started2\"; echo $LEASEHOLD_TERM > \"$DIR/term2\"");
        awaitWaiters("handover", 1);

        long signalledAt = System.currentTimeMillis();
        leader.process().destroy(); // SIGTERM
        var r = leader.await();
        assertThat(r.exitCode()).as(r.err()).isEqualTo(143);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("the command stopped").isFalse();
        var n = next.await();
        assertThat(n.exitCode()).as(n.err()).isZero();
        long started2 = Long.parseLong(Files.readString(dir.resolve("started2")).trim());
        assertThat(started2).as("the next command started after the leader's had ended (its TERM trap takes 300 ms)")
                .isGreaterThanOrEqualTo(Long.parseLong(Files.readString(dir.resolve("end1")).trim()));
        long handover = started2 - signalledAt;
        System.out.println("elect: SIGTERM to the leader -> the next leader's command started: " + handover + " ms");
        assertThat(handover).as("handed over by the resign, not after the 15 s lease").isLessThan(5_000);
        assertThat(Long.parseLong(Files.readString(dir.resolve("term2")).trim()))
                .isGreaterThan(Long.parseLong(Files.readString(dir.resolve("term1")).trim()));
    }

    @Test
    void aSigtermToAWaitingCandidateWithdrawsItFromTheQueue() throws Exception {
        Ticket held = ((AcquireOutcome.Acquired) server.client().acquire("queue", 0, 60)).ticket();
        MeterRegistry meters = server.bean(MeterRegistry.class);
        double withdrawalsBefore = meters.get("leasehold.withdrawals").counter().count();
        var waiting = cli.start(env(), "--verbose", "elect", "--key", "queue", "--", "/bin/sh", "-c",
                "echo LED >> \"$DIR/led\"");
        awaitWaiters("queue", 1);

        waiting.process().destroy(); // SIGTERM
        var r = waiting.await();

        assertThat(r.exitCode()).as(r.err()).isEqualTo(143);
        assertThat(r.err()).contains("withdrew from the queue of \"queue\"");
        assertThat(meters.get("leasehold.withdrawals").counter().count()).as("a W, not a closed session")
                .isEqualTo(withdrawalsBefore + 1);
        assertThat(server.bean(LockRegistry.class).inspect("queue".getBytes(), 10).waiters()).isZero();
        assertThat(dir.resolve("led")).doesNotExist();
        held.release();
    }

    @Test
    void theCommandsExitCodeIsTheCommandLinesAndTheTermIsReleased() throws Exception {
        var r = cli.run(env(), "elect", "--key", "code", "--identity", "n1", "--json", "--", "/bin/sh", "-c",
                "echo \"$LEASEHOLD_KEY $LEASEHOLD_IDENTITY $LEASEHOLD_TERM $LEASEHOLD_TOKEN\" > \"$DIR/env\"; exit 7");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(7);
        String[] env = Files.readString(dir.resolve("env")).trim().split(" ");
        assertThat(env[0]).isEqualTo("code");
        assertThat(env[1]).isEqualTo("n1");
        assertThat(env[3]).isEqualTo(env[2]);
        assertThat(r.out().lines().toList()).containsExactly(
                "{\"outcome\":\"elected\",\"key\":\"code\",\"identity\":\"n1\",\"term\":" + env[2]
                        + ",\"valid_until_ms\":" + validUntil(r.out()) + ",\"lease_s\":15}",
                "{\"outcome\":\"resigned\",\"key\":\"code\",\"identity\":\"n1\",\"term\":" + env[2]
                        + ",\"exit_code\":7}");
        assertThat(server.client().acquire("code", 0, 5)).as("resigned: released")
                .isInstanceOf(AcquireOutcome.Acquired.class);
    }

    @Test
    void electExitCodes() throws Exception {
        Ticket held = ((AcquireOutcome.Acquired) server.client().acquire("taken", 0, 60)).ticket();
        var timedOut = cli.run(env(), "elect", "--key", "taken", "--wait", "1s", "--", "/bin/true");
        assertThat(timedOut.exitCode()).as(timedOut.err()).isEqualTo(65);
        assertThat(timedOut.err()).startsWith("leasehold: timed out: not elected for \"taken\"")
                .contains("withdrew from its queue");
        assertThat(server.bean(LockRegistry.class).inspect("taken".getBytes(), 10).waiters()).isZero();
        held.release();

        var cannotStart = cli.run(env(), "elect", "--key", "nostart", "--", dir.resolve("missing").toString());
        assertThat(cannotStart.exitCode()).isEqualTo(127);
        assertThat(server.client().acquire("nostart", 0, 5)).as("resigned").isInstanceOf(AcquireOutcome.Acquired.class);

        var badGrace = cli.run(env(), "elect", "--key", "k", "--lease", "3s", "--kill-grace", "2s", "--", "/bin/true");
        assertThat(badGrace.exitCode()).isEqualTo(64);
        assertThat(badGrace.err()).contains("--kill-grace 2s does not fit a 3s lease").contains("at most 1.4s");
        var noCommand = cli.run(env(), "elect", "--key", "k");
        assertThat(noCommand.exitCode()).isEqualTo(64);
        assertThat(noCommand.err()).contains("elect needs a command after '--'");

        var help = cli.run("help", "elect");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("LEASEHOLD_TERM").contains("HOSTNAME:PID").contains("leasehold observe");
        assertThat(cli.run("--help").out()).contains("elect    campaign to lead a key");
    }

    @Test
    void aLostTermStopsTheCommandBeforeTheNextLeaderIsGranted() throws Exception {
        try (FaultProxy proxy = FaultProxy.start(server.port())) {
            // The command ignores SIGTERM, so only the SIGKILL ends it. Lease 8 s, safety 800 ms:
            // SIGTERM at V - 1.3 s, SIGKILL at V - 800 ms, V = the ticket's validity - 800 ms.
            var elect = cli.start(Map.of("DIR", dir.toString()), "--verbose", "--server", "127.0.0.1:" + proxy.port(),
                    "--timeout", "1s", "elect", "--key", "lost", "--lease", "8s", "--kill-grace", "500ms", "--",
                    "/bin/sh", "-c", "trap '' TERM; echo $$ > \"$DIR/pid\"; while :; do sleep 0.05; done");
            long pid = awaitFile(dir.resolve("pid"), elect);
            cli.killLater(pid);
            proxy.stallClientToServer(true);
            proxy.stallServerToClient(true);
            AtomicLong grantedAt = new AtomicLong();
            CompletableFuture<AcquireOutcome> next = server.client().acquireAsync("lost", 20, 5)
                    .whenComplete((o, e) -> grantedAt.set(System.currentTimeMillis()));

            long deadAt = 0;
            try {
                ProcessHandle.of(pid).orElseThrow().onExit().get(15, TimeUnit.SECONDS);
                deadAt = System.currentTimeMillis();
            } catch (TimeoutException stillAlive) {
                // deadAt stays 0: asserted below
            }
            var r = elect.await();

            assertThat(deadAt).as("the command was stopped").isPositive();
            assertThat(r.exitCode()).as(r.err()).isEqualTo(69);
            assertThat(r.err()).contains("lock lost").contains("sent SIGKILL");
            assertThat(next.get(25, TimeUnit.SECONDS)).isInstanceOf(AcquireOutcome.Acquired.class);
            System.out.println("elect: lost term: the command was dead " + (grantedAt.get() - deadAt)
                    + " ms before the next holder was granted");
            assertThat(grantedAt.get()).as("the next holder came after the command was dead")
                    .isGreaterThanOrEqualTo(deadAt);
            ((AcquireOutcome.Acquired) next.get()).ticket().release();
        }
    }

    private static String validUntil(String out) {
        return out.replaceAll("(?s).*\"valid_until_ms\":(\\d+).*", "$1");
    }

    /** Waits until the server's queue of {@code key} holds {@code n} waiters. */
    private void awaitWaiters(String key, int n) {
        // Polls the registry: the candidate's acquire reaching the queue has no event to await.
        Wait.until(n + " waiter(s) on " + key, Duration.ofSeconds(60),
                () -> server.bean(LockRegistry.class).inspect(key.getBytes(), 10).waiters(), w -> w == n);
    }

    /** Waits for the command to write a number to {@code file}; fails early if the CLI ended first. */
    private long awaitFile(Path file, CliProcess.Started started) throws Exception {
        // Polls the file: no event to await. 60 s: a JVM start took 35 s at load average 14 (docs/testing.md).
        return Wait.until("the CLI (pid " + started.process().pid() + ") to start its command and write " + file,
                Duration.ofSeconds(60), () -> {
                    String s = Files.exists(file) ? Files.readString(file).trim() : "";
                    if (s.isEmpty() && !started.process().isAlive()) {
                        throw Wait.giveUp("the CLI ended before its command started: " + started.stderr());
                    }
                    return s;
                }, s -> !s.isEmpty()).transform(Long::parseLong);
    }
}
