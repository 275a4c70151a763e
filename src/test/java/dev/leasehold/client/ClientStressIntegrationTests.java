package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Seeds;

/**
 * A seeded randomized run: several clients contend for a few keys through fault-injecting
 * proxies whose sessions are cut at random moments. Whatever happens, the safety promise must
 * hold: the intervals in which callers believed they held a key never overlap, and a guarded
 * resource sees strictly increasing fencing tokens per key. The seed is printed; rerun with
 * {@code -Dleasehold.seed=N} to repeat a run.
 */
class ClientStressIntegrationTests {

    private record Held(String key, long token, long from, long to) {
    }

    @Test
    void holdersNeverOverlapAndTokensOnlyGrow() throws Exception {
        long seed = Seeds.seed("ClientStressIntegrationTests");
        SplittableRandom seeds = new SplittableRandom(seed);
        String[] keys = {"stress-a", "stress-b", "stress-c"};
        List<Held> held = Collections.synchronizedList(new ArrayList<>());
        Map<String, AtomicLong> highest = Map.of(keys[0], new AtomicLong(), keys[1], new AtomicLong(),
                keys[2], new AtomicLong());
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger refusedByResource = new AtomicInteger();
        List<AutoCloseable> closeables = new ArrayList<>();
        try (TestServer server = TestServer.start(Map.of())) {
            List<FaultProxy> proxies = new ArrayList<>();
            List<LeaseholdClient> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                FaultProxy p = FaultProxy.start(server.port());
                closeables.add(p);
                proxies.add(p);
                LeaseholdClient c = LeaseholdClient.create(ClientOptions.builder().poolSize(1 + i % 2)
                        .responseGrace(Duration.ofMillis(500)).transportDeadline(Duration.ofSeconds(1))
                        .threadNamePrefix("stress-" + i).build(), List.of(p.address()));
                closeables.add(c);
                clients.add(c);
            }
            long end = System.nanoTime() + 12_000_000_000L;
            List<CompletableFuture<Void>> workers = new ArrayList<>();
            for (int w = 0; w < 6; w++) {
                LeaseholdClient c = clients.get(w % clients.size());
                SplittableRandom random = seeds.split();
                workers.add(CompletableFuture.runAsync(() -> {
                    while (System.nanoTime() < end) {
                        String key = keys[random.nextInt(keys.length)];
                        AcquireOutcome o = c.acquire(key, random.nextInt(3), 1 + random.nextInt(2));
                        if (!(o instanceof AcquireOutcome.Acquired a)) {
                            continue;
                        }
                        acquired.incrementAndGet();
                        try (Ticket t = a.ticket()) {
                            long from = System.nanoTime();
                            // the guarded resource: refuses a token lower than the highest seen
                            AtomicLong high = highest.get(key);
                            long previous = high.getAndAccumulate(t.token(), Math::max);
                            if (previous > t.token()) {
                                refusedByResource.incrementAndGet();
                            }
                            sleepMillis(random.nextInt(150));
                            long to = System.nanoTime();
                            if (t.validUntilNanos() - to > 0) {
                                held.add(new Held(key, t.token(), from, to));
                            } else {
                                held.add(new Held(key, t.token(), from, t.validUntilNanos()));
                            }
                        } catch (IllegalStateException closed) {
                            return;
                        }
                    }
                }));
            }
            SplittableRandom faults = seeds.split();
            while (System.nanoTime() < end) {
                sleepMillis(300 + faults.nextInt(700));
                proxies.get(faults.nextInt(proxies.size())).closeAllConnections();
            }
            for (CompletableFuture<Void> w : workers) {
                w.get(30, TimeUnit.SECONDS);
            }
        } finally {
            for (int i = closeables.size() - 1; i >= 0; i--) {
                closeables.get(i).close();
            }
        }
        System.out.println("stress: " + acquired.get() + " grants delivered, " + held.size() + " held intervals");
        assertThat(acquired.get()).isGreaterThan(10);
        assertThat(refusedByResource.get()).as("tokens seen by the resource only grow").isZero();
        for (String key : keys) {
            List<Held> list = new ArrayList<>(held.stream().filter(h -> h.key().equals(key)).toList());
            list.sort((x, y) -> Long.compare(x.from(), y.from()));
            for (int i = 1; i < list.size(); i++) {
                Held before = list.get(i - 1);
                Held after = list.get(i);
                assertThat(after.from() - before.to()).as("%s overlaps %s", after, before).isGreaterThanOrEqualTo(0);
                assertThat(after.token()).isGreaterThan(before.token());
            }
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms); // real time: a seeded think time between a client's calls
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
