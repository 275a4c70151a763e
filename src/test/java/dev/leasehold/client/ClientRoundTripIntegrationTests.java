package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import dev.leasehold.testing.TestServer;

/**
 * Measures (prints, does not assert timing) the round trip of an uncontended acquire + release
 * through the client against a ping, on loopback against the real server, plus pipelined
 * throughput. Numbers land in the test's output file
 * ({@code target/failsafe-reports/*ClientRoundTripIntegrationTests-output.txt}). A measurement,
 * so it runs only with {@code -Dleasehold.measure=true}.
 */
@EnabledIfSystemProperty(named = "leasehold.measure", matches = "true")
class ClientRoundTripIntegrationTests {

    private static final int WARMUP = 2_000;
    private static final int ROUNDS = 3_000;

    @Test
    void measureAcquireReleaseAgainstPing() throws Exception {
        try (TestServer server = TestServer.start(Map.of());
                LeaseholdClient client = LeaseholdClient.create(ClientOptions.builder().poolSize(1).build(),
                        List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port())))) {
            for (int i = 0; i < WARMUP; i++) {
                acquireRelease(client, "warm");
                client.ping();
            }
            long[] ping = new long[ROUNDS];
            long[] pingReported = new long[ROUNDS];
            long[] acquire = new long[ROUNDS];
            long[] acquireRelease = new long[ROUNDS];
            for (int i = 0; i < ROUNDS; i++) {
                long t0 = System.nanoTime();
                pingReported[i] = client.ping().toNanos();
                long t1 = System.nanoTime();
                AcquireOutcome o = client.acquire("measure", 0, 10);
                long t2 = System.nanoTime();
                ((AcquireOutcome.Acquired) o).ticket().release();
                long t3 = System.nanoTime();
                ping[i] = t1 - t0;
                acquire[i] = t2 - t1;
                acquireRelease[i] = t3 - t1;
            }
            int pipelined = 20_000;
            long p0 = System.nanoTime();
            List<CompletableFuture<ReleaseOutcome>> all = new ArrayList<>(pipelined);
            for (int i = 0; i < pipelined; i++) {
                all.add(client.acquireAsync("pipe-" + (i % 1000) + "-" + i, 0, 10)
                        .thenCompose(x -> ((AcquireOutcome.Acquired) x).ticket().releaseAsync()));
            }
            for (CompletableFuture<ReleaseOutcome> f : all) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
            }
            long pipelinedNanos = System.nanoTime() - p0;
            String report = String.join("\n",
                    "Leasehold client round trips, loopback, 1 session, " + ROUNDS + " sequential rounds after "
                            + WARMUP + " warm-up (microseconds: median / p90 / p99 / mean)",
                    "  ping() blocking call          " + stats(ping),
                    "  ping() reported RTT           " + stats(pingReported),
                    "  acquire() (wait 0) blocking   " + stats(acquire),
                    "  acquire() + release()         " + stats(acquireRelease),
                    String.format("  pipelined acquire+release: %d pairs in %.0f ms = %.0f pairs/s", pipelined,
                            pipelinedNanos / 1e6, pipelined / (pipelinedNanos / 1e9)));
            System.out.println(report);
        }
    }

    private static void acquireRelease(LeaseholdClient client, String key) {
        ((AcquireOutcome.Acquired) client.acquire(key, 0, 10)).ticket().release();
    }

    private static String stats(long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        double mean = Arrays.stream(s).average().orElse(0);
        return String.format("%7.1f / %7.1f / %7.1f / %7.1f", s[s.length / 2] / 1e3, s[s.length * 9 / 10] / 1e3,
                s[s.length * 99 / 100] / 1e3, mean / 1e3);
    }
}
