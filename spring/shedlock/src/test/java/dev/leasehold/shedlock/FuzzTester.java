package dev.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's fuzz test, rewritten from its description: 8 threads on 2 lock names, 100
 * iterations each (one thread 10), each iteration reads an unsynchronised counter, sleeps 1 ms
 * and writes it back plus one under the lock (lockAtMostFor 5 min, lockAtLeastFor 5 ms). Any
 * overlap of two holders loses an increment, so the totals must be exact.
 */
final class FuzzTester {

    private static final int THREADS = 8;
    private static final int ITERATIONS = 100;
    private static final int SHORT_ITERATION = 10;
    private static final Duration SLEEP_FOR = Duration.ofMillis(1);

    private final LockProvider lockProvider;
    private final String prefix;
    private final int[] counters = new int[2];

    FuzzTester(LockProvider lockProvider, String prefix) {
        this.lockProvider = lockProvider;
        this.prefix = prefix;
    }

    void doFuzzTest() throws Exception {
        ExecutorService executor = Executors.newFixedThreadPool(THREADS);
        try {
            int[] iterations = new int[THREADS];
            java.util.Arrays.fill(iterations, ITERATIONS);
            iterations[0] = SHORT_ITERATION; // a short task among long ones
            List<Callable<Void>> tasks = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                int n = iterations[i];
                int job = i % 2;
                tasks.add(() -> task(n, job));
            }
            for (Future<Void> f : executor.invokeAll(tasks, 5, TimeUnit.MINUTES)) {
                f.get();
            }
            int[] expected = new int[2];
            for (int i = 0; i < THREADS; i++) {
                expected[i % 2] += iterations[i];
            }
            assertThat(counters[0]).isEqualTo(expected[0]);
            assertThat(counters[1]).isEqualTo(expected[1]);
        } finally {
            executor.shutdownNow();
        }
    }

    private Void task(int iterations, int job) throws InterruptedException {
        for (int i = 0; i < iterations;) {
            LockConfiguration cfg = new LockConfiguration(ClockProvider.now(), prefix + "-fuzz-" + job,
                    Duration.ofMinutes(5), Duration.ofMillis(5));
            Optional<SimpleLock> lock = lockProvider.lock(cfg);
            if (lock.isPresent()) {
                int n = counters[job];
                Thread.sleep(SLEEP_FOR.toMillis());
                counters[job] = n + 1;
                i++;
                lock.get().unlock();
            }
        }
        return null;
    }
}
