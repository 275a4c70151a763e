package dev.leasehold.faults;

import static dev.leasehold.testing.ServerProcess.props;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.TestServer;

/**
 * The figures of docs/restart.md, measured on real server processes: first grant on a fresh data
 * directory, the grace after {@code kill -9} with 2 s, 30 s and 255 s leases in use, and the lease
 * horizon's write rate under steady W1-style load (16 threads, 64 keys each, acquire wait 0 then
 * release) with 2 s leases. Minutes of load, so off by default:
 * {@code ./mvnw test -Dtest=RestartMeasurementsIntegrationTests -Dleasehold.measure=true}
 * ({@code -Dleasehold.measure.load-seconds=120} for the write-rate run).
 */
@EnabledIfSystemProperty(named = "leasehold.measure", matches = "true")
class RestartMeasurementsIntegrationTests {

    static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    final long loadSeconds = Long.getLong("leasehold.measure.load-seconds", 120);

    @Test
    void firstGrantOnAFreshDataDirectory() throws Exception {
        Path dir = Files.createTempDirectory("leasehold-measure");
        long launched = System.nanoTime();
        try (ServerProcess server = ServerProcess.start(dir, Map.of());
                RawClient c = new RawClient(server.port())) {
            long listening = System.nanoTime();
            c.send(new Request.Acquire(0, 5, 1, "first".getBytes(UTF_8)));
            Answer a = c.next(10_000);
            long granted = System.nanoTime();
            assertThat(a).isInstanceOf(Answer.Acquired.class);
            System.out.printf("MEASURE fresh data dir: grace %d ms (%s); first A %.1f ms after the Acquire,"
                    + " %d ms after launch (JVM start %d ms)%n", server.graceMillis(), server.graceReason(),
                    (granted - listening) / 1e6, (granted - launched) / MS, (listening - launched) / MS);
        } finally {
            TestServer.deleteTree(dir);
        }
    }

    @Test
    void graceAfterKillDashNineFollowsTheLeasesInUse() throws Exception {
        for (int lease : new int[] {2, 30, 255}) {
            Path dir = Files.createTempDirectory("leasehold-measure");
            try {
                ServerProcess first = ServerProcess.start(dir, Map.of());
                long[] loaded = load(first, lease, 20);
                first.kill9();
                long killed = System.nanoTime();
                try (ServerProcess second = ServerProcess.start(dir, Map.of());
                        RawClient c = new RawClient(second.port())) {
                    long listening = System.nanoTime();
                    long grace = second.graceMillis();
                    String firstGrant = "not waited for (255 s)";
                    if (grace < 60_000) {
                        c.send(new Request.Acquire(255, 1, 1, "after-kill".getBytes(UTF_8)));
                        assertThat(c.next(300_000)).isInstanceOf(Answer.Acquired.class);
                        firstGrant = ((System.nanoTime() - killed) / MS) + " ms after the kill";
                    }
                    System.out.printf("MEASURE kill -9 with %d s leases (%d grants in 20 s): restart %d ms, grace %d ms"
                            + " (%s), first grant %s%n", lease, loaded[0], (listening - killed) / MS, grace,
                            second.graceReason(), firstGrant);
                    assertThat(second.graceReason()).isEqualTo("crash horizon");
                    assertThat(grace).isLessThanOrEqualTo(Math.min(255, lease + 10) * 1000L);
                } finally {
                    first.close();
                }
            } finally {
                TestServer.deleteTree(dir);
            }
        }
    }

    @Test
    void horizonWriteRateUnderSteadyLoadWithTwoSecondLeases() throws Exception {
        Path dir = Files.createTempDirectory("leasehold-measure");
        try (ServerProcess server = ServerProcess.start(dir, Map.of())) {
            Actuator http = new Actuator(managementPort(server));
            double writesBefore = http.scrape().value("leasehold_lease_horizon_writes_total");
            long[] loaded = load(server, 2, loadSeconds);
            Actuator.Scrape after = http.scrape();
            double writes = after.value("leasehold_lease_horizon_writes_total") - writesBefore;
            System.out.printf("MEASURE steady W1-style load, 2 s leases: %d grants in %d s (%.0f/s), %.0f horizon"
                    + " writes = %.1f per minute (2 fsyncs each: file and directory), %.0f answers waited for one%n",
                    loaded[0], loadSeconds, loaded[0] / (double) loadSeconds, writes, writes * 60 / loadSeconds,
                    after.value("leasehold_lease_horizon_waits_total"));
            assertThat(writes * 60 / loadSeconds).isLessThan(12);
        } finally {
            TestServer.deleteTree(dir);
        }
    }

    private static int managementPort(ServerProcess server) throws IOException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("Netty started on port (\\d+)")
                .matcher(server.output());
        assertThat(m.find()).as("management port in the log").isTrue();
        return Integer.parseInt(m.group(1));
    }

    /** W1-style: 16 threads, each on its own 64 keys, acquire (wait 0) then release. {grants}. */
    private static long[] load(ServerProcess server, int lease, long seconds) throws Exception {
        AtomicLong grants = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try (RawClient c = new RawClient(server.port())) {
                    for (long i = 0; !stop.get(); i++) {
                        byte[] key = ("w1/" + id + "/" + (i % 64)).getBytes(UTF_8);
                        c.send(new Request.Acquire(0, lease, i, key));
                        if (c.next(10_000) instanceof Answer.Acquired a) {
                            grants.incrementAndGet();
                            c.send(new Request.Release(a.token(), key));
                            c.next(10_000);
                        }
                    }
                } catch (IOException e) {
                    // the server was killed
                }
            });
            th.start();
            threads.add(th);
        }
        Thread.sleep(seconds * 1000); // the load runs for this long: real time is what is measured
        // One lease held at the kill, so the crash has a lease of this length still running.
        try (RawClient holder = new RawClient(server.port())) {
            holder.send(new Request.Acquire(0, lease, 1, "held".getBytes(UTF_8)));
            holder.next(10_000);
        }
        stop.set(true);
        for (Thread th : threads) {
            th.join(15_000);
        }
        return new long[] {grants.get()};
    }
}
