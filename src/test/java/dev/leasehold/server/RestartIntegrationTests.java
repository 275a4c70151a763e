package dev.leasehold.server;

import static dev.leasehold.testing.ServerProcess.props;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Restart safety with real processes (PROTOCOL.md 6.2 and section 8): {@code kill -9} under
 * load, restart on the same data directory, SIGTERM with waiters queued, and start-up on a
 * corrupt data directory. Times are taken on this JVM's monotonic clock, which is the machine's
 * (CLOCK_MONOTONIC), so they compare with the servers' own.
 *
 * <p>The kill -9 test restarts with a configured grace equal to its longest lease (8 s), then
 * checks that {@code auto} after a crash follows the leases in use (seconds, not 255 s).
 */
class RestartIntegrationTests {

    static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    Path dataDir;
    final List<AutoCloseable> cleanup = new ArrayList<>();

    @BeforeEach
    void dataDir() throws IOException {
        dataDir = Files.createTempDirectory("leasehold-restart");
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            try {
                cleanup.get(i).close();
            } catch (IOException ignored) {
                // a session the server already closed
            }
        }
        TestServer.deleteTree(dataDir);
    }

    <T extends AutoCloseable> T closeLater(T resource) {
        cleanup.add(resource);
        return resource;
    }

    @Test
    void killDashNineUnderLoadThenRestartNeitherReusesTokensNorGrantsBeforeOldLeasesEnd() throws Exception {
        // Small token blocks, so the kill lands after several block writes, mid-block. (With
        // blocks this small a busy disk can fall behind under load: then Acquires get B, STORAGE.)
        ServerProcess first = closeLater(ServerProcess.start(dataDir,
                props("leasehold.recovery-grace", "0s", "leasehold.token-block-size", "200")));

        // Load: four sessions acquiring (lease 2 s) and mostly releasing, 8 keys each.
        AtomicLong maxToken = new AtomicLong();
        AtomicLong grants = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> loaders = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            RawClient c = closeLater(new RawClient(first.port()));
            int id = t;
            Thread loader = new Thread(() -> load(c, id, maxToken, grants, stop), "load-" + t);
            loader.start();
            loaders.add(loader);
        }
        Wait.until("over 150 grants by the load (traffic under way)", Duration.ofSeconds(30), grants::get, n -> n > 150);

        // Five keys held with 8 s leases when the server dies. Their leases end no later than the
        // answer's arrival + 8 s: the restarted server must not grant them before that.
        RawClient holder = closeLater(new RawClient(first.port()));
        Map<String, Long> heldUntil = new ConcurrentHashMap<>();
        for (int i = 0; i < 5; i++) {
            String key = "held/" + i;
            Answer a;
            int tries = 0;
            do { // B (token writer behind the load) is a legitimate answer: try again
                holder.send(new Request.Acquire(0, 8, i, key.getBytes(UTF_8)));
                a = holder.next();
            } while (a instanceof Answer.Busy && ++tries < 100 && sleep(10));
            assertThat(a).isInstanceOf(Answer.Acquired.class);
            heldUntil.put(key, System.nanoTime() + TimeUnit.SECONDS.toNanos(8));
            maxToken.accumulateAndGet(((Answer.Acquired) a).token(), Math::max);
        }
        Thread.sleep(200); // real time: the load runs on past the holds, so the kill lands mid-traffic

        first.kill9();
        long killedAt = System.nanoTime();
        stop.set(true);
        for (Thread loader : loaders) {
            loader.join(5000);
        }
        assertThat(grants.get()).as("grants under load before the kill").isGreaterThan(100);
        long lastTokenBefore = maxToken.get();

        // Restart on the same directory with a grace equal to the longest lease (8 s).
        ServerProcess second = closeLater(ServerProcess.start(dataDir, props("leasehold.recovery-grace", "8s")));
        long restartedAt = System.nanoTime();
        assertThat(second.graceMillis()).isEqualTo(8000);
        RawClient probe = closeLater(new RawClient(second.port()));
        // During the grace every key is HELD: wait=0 gets T, held or not.
        probe.send(new Request.Acquire(0, 1, 1, "held/0".getBytes(UTF_8)),
                new Request.Acquire(0, 1, 2, "never-used".getBytes(UTF_8)));
        assertThat(probe.next()).isEqualTo(new Answer.TimedOut(1));
        assertThat(probe.next()).isEqualTo(new Answer.TimedOut(2));
        // wait>0 queues and is granted when the grace ends, not before the old leases ended.
        Map<Long, Long> sentAt = new ConcurrentHashMap<>();
        for (int i = 0; i < 5; i++) {
            sentAt.put(100L + i, System.nanoTime());
            probe.send(new Request.Acquire(30, 1, 100 + i, ("held/" + i).getBytes(UTF_8)));
        }
        Set<Long> firstTokens = new HashSet<>();
        long minGrantAfterKill = Long.MAX_VALUE;
        long queuedMsSeen = 0;
        for (int i = 0; i < 5; i++) {
            Answer a = probe.next(20_000);
            assertThat(a).isInstanceOf(Answer.Acquired.class);
            Answer.Acquired acq = (Answer.Acquired) a;
            // The grant happened no earlier than send + queued_ms (receipt is after the send).
            long grantedNoEarlierThan = sentAt.get(acq.owner()) + acq.queuedMs() * MS;
            String key = "held/" + (acq.owner() - 100);
            assertThat(grantedNoEarlierThan).as("%s granted before its old lease could have ended", key)
                    .isGreaterThanOrEqualTo(heldUntil.get(key));
            minGrantAfterKill = Math.min(minGrantAfterKill, grantedNoEarlierThan - killedAt);
            queuedMsSeen = Math.max(queuedMsSeen, acq.queuedMs());
            firstTokens.add(acq.token());
        }
        long firstTokenAfter = firstTokens.stream().min(Long::compare).orElseThrow();
        assertThat(firstTokenAfter).as("first token after kill -9").isGreaterThan(lastTokenBefore);
        System.out.printf("kill -9 restart: %d grants before the kill, last token %d, first token after %d;"
                + " restart took %d ms, grace 8000 ms, waiters queued %d ms, first grant %d ms after the kill%n",
                grants.get(), lastTokenBefore, firstTokenAfter, (restartedAt - killedAt) / MS, queuedMsSeen,
                minGrantAfterKill / MS);

        // What `auto` makes of a crash: kill the restarted server too, start a third with auto.
        second.kill9();
        long secondKilledAt = System.nanoTime();
        ServerProcess third = closeLater(ServerProcess.start(dataDir, Map.of()));
        long downMillis = (System.nanoTime() - secondKilledAt) / MS;
        long autoGrace = third.graceMillis();
        System.out.printf("auto grace after kill -9: %d ms (server down about %d ms)%n", autoGrace, downMillis);
        assertThat(third.output()).contains("(crash horizon)").contains("auto: crash horizon");
        // The horizon follows the leases in use: 1 s leases in the second run, but its horizon
        // never went below the first run's (8 s leases + 10 s look-ahead from the first kill).
        // So the grace is at most about 18 s from the first kill, never 255 s.
        assertThat(autoGrace).isLessThanOrEqualTo(18_500L);
        RawClient late = closeLater(new RawClient(third.port()));
        long sent = System.nanoTime();
        late.send(new Request.Acquire(60, 1, 1, "never-used".getBytes(UTF_8)));
        Answer lateAnswer = late.next(30_000);
        assertThat(lateAnswer).isInstanceOf(Answer.Acquired.class);
        System.out.printf("first grant after the third start: %d ms after the Acquire (queued_ms %d)%n",
                (System.nanoTime() - sent) / MS, ((Answer.Acquired) lateAnswer).queuedMs());
    }

    /** A pause before retrying a Busy: real time, the token writer's fsync must catch up. */
    private static boolean sleep(long millis) throws InterruptedException {
        Thread.sleep(millis); // real time: see above
        return true;
    }

    private static void load(RawClient c, int id, AtomicLong maxToken, AtomicLong grants, AtomicBoolean stop) {
        try {
            for (long i = 0; !stop.get(); i++) {
                byte[] key = ("load/" + id + "/" + (i % 8)).getBytes(UTF_8);
                c.send(new Request.Acquire(0, 2, i, key));
                Answer a = c.next(5000);
                if (a instanceof Answer.Acquired acq) {
                    maxToken.accumulateAndGet(acq.token(), Math::max);
                    grants.incrementAndGet();
                    if (i % 10 != 0) { // every tenth stays held until its lease ends
                        c.send(new Request.Release(acq.token(), key));
                        c.next(5000);
                    }
                }
            }
        } catch (IOException killed) {
            // the server was killed: expected
        }
    }

    @Test
    void sigtermWithWaitersQueuedAnswersEachBQuicklyExitsAndTheNextStartWaitsOnlyForRealLeases() throws Exception {
        ServerProcess server = closeLater(ServerProcess.start(dataDir,
                props("leasehold.recovery-grace", "0s", "leasehold.drain-timeout", "5s")));
        byte[] key = "orders/42".getBytes(UTF_8);
        RawClient holder = closeLater(new RawClient(server.port()));
        holder.send(new Request.Acquire(0, 20, 1, key));
        assertThat(holder.next()).isInstanceOf(Answer.Acquired.class);
        long leaseEnds = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);

        List<RawClient> waiting = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            RawClient c = closeLater(new RawClient(server.port()));
            waiting.add(c);
            for (int i = 0; i < 3; i++) {
                c.send(new Request.Acquire(60, 5, s * 10 + i, key));
            }
            c.send(new Request.Ping(s));
            assertThat(c.next()).isEqualTo(new Answer.Pong(s));
        }

        long t0 = System.nanoTime();
        Thread terminator = new Thread(() -> {
            try {
                server.terminate(15_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        terminator.start();
        for (RawClient c : waiting) {
            for (int i = 0; i < 3; i++) {
                assertThat(c.next(3000)).isInstanceOf(Answer.Busy.class);
            }
        }
        long lastB = (System.nanoTime() - t0) / MS;
        for (RawClient c : waiting) {
            assertThat(c.closedByServer(3000)).isTrue();
        }
        assertThat(holder.closedByServer(3000)).as("the holder's session is closed too, without an answer").isTrue();
        Integer exit = server.awaitExit(10_000);
        long exited = (System.nanoTime() - t0) / MS;
        terminator.join();
        assertThat(exit).as("exit code after SIGTERM").isNotNull().isEqualTo(143);
        assertThat(server.output()).contains("Drained in").contains("9 queued Acquires answered B");
        System.out.printf("SIGTERM: last B after %d ms, process exited after %d ms%n", lastB, exited);
        assertThat(lastB).isLessThan(2000);
        assertThat(exited).isLessThan(5000);

        // Graceful stop lowered the horizon to the held lease's end + 2 s slack: `auto` waits
        // for that lease only, not 255 s.
        // The horizon is read between launch and listening: the grace covers what is left of the
        // lease at listening, and is at most what was left at launch plus the 2 s slack.
        long leaseLeftAtLaunch = (leaseEnds - System.nanoTime()) / MS;
        ServerProcess next = closeLater(ServerProcess.start(dataDir, Map.of()));
        long leaseLeft = (leaseEnds - System.nanoTime()) / MS;
        long grace = next.graceMillis();
        System.out.printf("auto grace after a graceful stop: %d ms (held lease had %d..%d ms left)%n", grace,
                leaseLeft, leaseLeftAtLaunch);
        assertThat(grace).isGreaterThanOrEqualTo(leaseLeft).isLessThanOrEqualTo(leaseLeftAtLaunch + 2_100);
        assertThat(next.output()).contains("(graceful stop)");
        RawClient c = closeLater(new RawClient(next.port()));
        c.send(new Request.Acquire(0, 1, 1, key));
        assertThat(c.next()).isEqualTo(new Answer.TimedOut(1));
    }

    @Test
    void aCorruptTokenFileStopsStartUpWithAReportNamingIt() throws Exception {
        Files.writeString(dataDir.resolve("tokens"), "leasehold-tokens v1\n12\n0\n");
        ServerProcess server = closeLater(ServerProcess.launch(dataDir, Map.of()));
        assertThat(server.awaitExit(60_000)).isNotNull().isNotZero();
        assertThat(server.output()).contains("APPLICATION FAILED TO START")
                .contains(dataDir.resolve("tokens") + ": checksum mismatch")
                .contains("Restore " + dataDir.resolve("tokens"));
    }
}
