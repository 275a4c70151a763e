package dev.leasehold.inspect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * A measurement, not a test: the real server with 1,000,000 held keys, the grant round trip
 * (Acquire + Release of another key, one session, loopback) while {@code GET
 * /actuator/locks?top=10} runs back to back, against the same without it; and what each
 * {@code top} costs. Off unless {@code -Dleasehold.measure=true}; bounded in count and time.
 * Numbers: docs/operations.md.
 *
 * <pre>
 * ./mvnw -B -o -pl :leasehold -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=TopMeasurementIntegrationTests -Dleasehold.measure=true
 * </pre>
 */
@EnabledIfSystemProperty(named = "leasehold.measure", matches = "true")
class TopMeasurementIntegrationTests {

    private static final int KEYS = Integer.getInteger("leasehold.measure.keys", 1_000_000);
    private static final int ROUNDS = 20_000;

    @Test
    void grantRoundTripWhileTopRunsOverAMillionHeldKeys() throws Exception {
        try (TestServer server = TestServer.start(Map.of("leasehold.max-held-keys", String.valueOf(KEYS + 10_000),
                "management.endpoints.web.exposure.include", "health,locks"))) {
            long t0 = System.nanoTime();
            try (RawClient filler = new RawClient(server.port())) {
                int batch = 5_000;
                for (int sent = 0; sent < KEYS; sent += batch) {
                    List<Request> frames = new ArrayList<>(batch);
                    for (int i = sent; i < Math.min(KEYS, sent + batch); i++) {
                        frames.add(new Request.Acquire(0, 255, i, Request.key("held/" + i)));
                    }
                    filler.send(frames.toArray(new Request[0]));
                    for (int i = 0; i < frames.size(); i++) {
                        filler.next(30_000);
                    }
                }
            }
            System.out.printf("%,d keys held over the wire in %d s%n", KEYS, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0));
            Actuator actuator = new Actuator(server.httpPort());
            try (RawClient c = new RawClient(server.port())) {
                roundTrips(c, ROUNDS); // warm-up
                for (int round = 1; round <= 3; round++) { // alternated: the machine's own noise shows
                    measure(c, actuator, round);
                }
            }
        }
    }

    private static void measure(RawClient c, Actuator actuator, int round) throws Exception {
                long[] quiet = roundTrips(c, ROUNDS);
                AtomicBoolean stop = new AtomicBoolean();
                List<Long> topMs = new ArrayList<>();
                List<Long> scanMs = new ArrayList<>();
                Thread topper = new Thread(() -> {
                    while (!stop.get() && topMs.size() < 100) {
                        long s = System.nanoTime();
                        Actuator.Response r = actuator.get("/actuator/locks?top=10");
                        topMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s));
                        scanMs.add(((Number) r.json("$.tookMs")).longValue());
                    }
                }, "top-over-http");
                topper.start();
                long[] busy = roundTrips(c, ROUNDS);
                stop.set(true);
                topper.join(120_000);
                System.out.printf("round %d: GET /actuator/locks?top=10 over %,d keys: %d calls, HTTP ms median %d"
                        + " max %d; scan ms median %d max %d%n", round, KEYS, topMs.size(), median(topMs), max(topMs),
                        median(scanMs), max(scanMs));
                System.out.printf("round %d: grant round trip (A+R, µs) p50 / p99 / p99.9 / max: without top %s;"
                        + " with top %s%n", round, stats(quiet), stats(busy));
    }

    private static long[] roundTrips(RawClient c, int n) throws Exception {
        long[] lat = new long[n];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        int i = 0;
        for (; i < n && System.nanoTime() < deadline; i++) {
            byte[] key = Request.key("free/" + (i & 255));
            long s = System.nanoTime();
            c.send(new Request.Acquire(0, 10, i, key));
            long token = ((Answer.Acquired) c.next()).token();
            c.send(new Request.Release(token, key));
            c.next();
            lat[i] = System.nanoTime() - s;
        }
        long[] out = Arrays.copyOf(lat, i);
        Arrays.sort(out);
        return out;
    }

    private static String stats(long[] s) {
        return String.format("%.0f / %.0f / %.0f / %.0f (n=%d)", s[s.length / 2] / 1e3, s[(int) (s.length * 0.99)] / 1e3,
                s[(int) (s.length * 0.999)] / 1e3, s[s.length - 1] / 1e3, s.length);
    }

    private static long median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        s.sort(null);
        return s.isEmpty() ? -1 : s.get(s.size() / 2);
    }

    private static long max(List<Long> v) {
        return v.stream().mapToLong(Long::longValue).max().orElse(-1);
    }
}
