package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A measurement, not a test (it asserts nothing about time): the cost of {@link LockRegistry#top}
 * over 1,000,000 held keys, and the latency of grants (acquire + release of other keys) while it
 * runs against without it. Off unless {@code -Dleasehold.measure=true}; bounded in count and
 * time. Prints its numbers.
 *
 * <pre>
 * ./mvnw -B -o -pl :leasehold -am test -Dtest=TopMeasurementTests -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dleasehold.measure=true [-Dleasehold.measure.keys=1000000]
 * </pre>
 */
@EnabledIfSystemProperty(named = "leasehold.measure", matches = "true")
class TopMeasurementTests {

    private static final int KEYS = Integer.getInteger("leasehold.measure.keys", 1_000_000);
    private static final int GRANTS = 2_000_000;
    private static final int TOPS = 10;
    private static final int CHUNK = Integer.getInteger("leasehold.measure.chunk", 1024);

    @Test
    void topOverAMillionHeldKeysAndGrantLatencyMeanwhile() throws Exception {
        long[] tokens = {0};
        LockRegistry registry = new LockRegistry(new RegistryLimits(1024, 100_000, 1024, KEYS + 1000),
                NanoClock.SYSTEM, () -> ++tokens[0] > 0 ? tokens[0] : 1, LeaseHorizon.UNBOUNDED, w -> { },
                RegistryObserver.NONE);
        SessionHandle session = new SessionHandle();
        long t0 = System.nanoTime();
        for (int i = 0; i < KEYS; i++) {
            registry.acquire(("held/" + i).getBytes(StandardCharsets.UTF_8), HoldMode.EXCLUSIVE, 0, 255, i, System.nanoTime(), session);
        }
        System.out.printf("%,d keys held in %d ms%n", registry.heldKeys(), ms(System.nanoTime() - t0));

        grantLatencies(registry, session, null, GRANTS); // warm-up
        long[] quiet = grantLatencies(registry, session, null, GRANTS);
        AtomicBoolean stop = new AtomicBoolean();
        long[] topMillis = new long[TOPS];
        int[] tops = {0};
        Thread topper = new Thread(() -> {
            while (!stop.get() && tops[0] < TOPS) {
                TopKeys t = registry.top(10, CHUNK, 5);
                topMillis[tops[0]++] = ms(t.tookNanos());
            }
        }, "top");
        long[] busy = grantLatencies(registry, session, topper::start, GRANTS);
        stop.set(true);
        topper.join(TimeUnit.MINUTES.toMillis(2));
        long[] ran = Arrays.copyOf(topMillis, tops[0]);
        Arrays.sort(ran);
        System.out.printf("top(10) over %,d keys, chunk %d slots: %d runs, ms min %d / median %d / max %d%n", KEYS,
                CHUNK, ran.length, ran.length > 0 ? ran[0] : -1, ran.length > 0 ? ran[ran.length / 2] : -1,
                ran.length > 0 ? ran[ran.length - 1] : -1);
        System.out.printf("acquire+release of another key, µs p50 / p99 / p99.9 / max: without top %s; with top %s%n",
                stats(quiet), stats(busy));
    }

    /** {@link #GRANTS} acquire+release pairs on keys outside the held set; {@code during} starts alongside. */
    private static long[] grantLatencies(LockRegistry registry, SessionHandle session, Runnable during, int count) {
        byte[][] keys = new byte[1024][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = ("free/" + i).getBytes(StandardCharsets.UTF_8);
        }
        if (during != null) {
            during.run();
        }
        long[] lat = new long[count];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int n = 0;
        for (; n < count && System.nanoTime() < deadline; n++) {
            byte[] k = keys[n & 1023];
            long s = System.nanoTime();
            AcquireResult r = registry.acquire(k, HoldMode.EXCLUSIVE, 0, 10, n, s, session);
            registry.release(k, ((AcquireResult.Granted) r).token());
            lat[n] = System.nanoTime() - s;
        }
        long[] out = Arrays.copyOf(lat, n);
        Arrays.sort(out);
        return out;
    }

    private static String stats(long[] sorted) {
        return String.format("%.1f / %.1f / %.1f / %.1f (n=%d)", us(sorted[sorted.length / 2]),
                us(sorted[(int) (sorted.length * 0.99)]), us(sorted[(int) (sorted.length * 0.999)]),
                us(sorted[sorted.length - 1]), sorted.length);
    }

    private static double us(long nanos) {
        return nanos / 1000.0;
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
