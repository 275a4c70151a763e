package dev.leasehold.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.testing.support.LoopbackServer;

/**
 * Measures (prints, asserts no timing) what the registry adds to a bare client acquire + release:
 * one thread, uncontended, loopback, p50/p90/p99 of {@code lock(); unlock();} against
 * {@code acquire(key, 0, 30); release()}, with renewal on (the default: a keep-alive per grant)
 * and off. Interleaved rounds so that noise from the shared machine hits both alike. Output in
 * {@code target/failsafe-reports/*RegistryOverheadMeasurementIntegrationTests-output.txt}. A
 * measurement, not a test, so it runs only when asked: {@code -Dleasehold.measure=true}
 * (docs/testing.md).
 */
@EnabledIfSystemProperty(named = "leasehold.measure", matches = "true")
class RegistryOverheadMeasurementIntegrationTests {

    private static final int WARMUP = 2_000;
    private static final int ROUNDS = 3_000;

    @Test
    void measureLockUnlockAgainstBareAcquireRelease() {
        LoopbackServer server = LoopbackServer.shared();
        try (LeaseholdClient client = LeaseholdClient.create(ClientOptions.builder().poolSize(1).build(),
                server.address())) {
            LeaseholdLockRegistry renewing = new LeaseholdLockRegistry(client, "measure-renew");
            LeaseholdLockRegistry plain = new LeaseholdLockRegistry(client, "measure-plain");
            plain.setRenewal(false);
            LeaseholdLock lockRenewing = renewing.obtain("k");
            LeaseholdLock lockPlain = plain.obtain("k");
            long[] bare = new long[ROUNDS];
            long[] reg = new long[ROUNDS];
            long[] regPlain = new long[ROUNDS];
            for (int i = 0; i < WARMUP + ROUNDS; i++) {
                long t0 = System.nanoTime();
                AcquireOutcome o = client.acquire("measure-bare", 0, 30);
                ((AcquireOutcome.Acquired) o).ticket().release();
                long t1 = System.nanoTime();
                lockRenewing.lock();
                lockRenewing.unlock();
                long t2 = System.nanoTime();
                lockPlain.lock();
                lockPlain.unlock();
                long t3 = System.nanoTime();
                if (i >= WARMUP) {
                    bare[i - WARMUP] = t1 - t0;
                    reg[i - WARMUP] = t2 - t1;
                    regPlain[i - WARMUP] = t3 - t2;
                }
            }
            String line = String.format("one thread, %d rounds after %d warm-up, microseconds p50/p90/p99:%n"
                    + "  client acquire(0, 30 s)+release : %s%n"
                    + "  registry lock()+unlock()         : %s   (renewal on, the default)%n"
                    + "  registry lock()+unlock()         : %s   (renewal off)%n"
                    + "  overhead p50: %+.1f us (renewal on), %+.1f us (renewal off)",
                    ROUNDS, WARMUP, pct(bare), pct(reg), pct(regPlain),
                    (p(reg, 50) - p(bare, 50)) / 1000.0, (p(regPlain, 50) - p(bare, 50)) / 1000.0);
            System.out.println(line);
            assertThat(p(reg, 50)).isPositive();
        }
    }

    private static String pct(long[] a) {
        return String.format("%.1f / %.1f / %.1f", p(a, 50) / 1000.0, p(a, 90) / 1000.0, p(a, 99) / 1000.0);
    }

    private static long p(long[] a, int pct) {
        long[] s = a.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, s.length * pct / 100)];
    }
}
