import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.spring.integration.LeaseholdLockRegistry;

/**
 * Spring Integration's {@code Lock} through Leasehold, as a Spring user holds it (run by
 * {@code bench/spring-lock.sh}): 16 threads, each {@code lock()} then {@code unlock()} on its own
 * 64 keys through ONE {@link LeaseholdLockRegistry} (renewal off). 2 s of warm-up, then
 * {@code SECONDS} measured; every loop is bounded by time, and a failed lock or unlock ends the
 * run with its exception instead of silently lowering the rate.
 *
 * <p>Usage: {@code SpringLockBench HOST:PORT SECONDS}
 */
public final class SpringLockBench {

    private static final int THREADS = 16;
    private static final int KEYS_PER_THREAD = 64;

    public static void main(String[] args) throws Exception {
        String server = args[0];
        int seconds = Integer.parseInt(args[1]);
        try (LeaseholdClient client = LeaseholdClient.create(server)) {
            LeaseholdLockRegistry registry = new LeaseholdLockRegistry(client);
            registry.setRenewal(false);
            run(registry, 2); // warm-up, not reported
            System.out.printf("lock+unlock pairs/s: %.0f%n", run(registry, seconds));
        }
    }

    /** Pairs per second over {@code seconds} of THREADS threads; rethrows the first failure. */
    private static double run(LeaseholdLockRegistry registry, int seconds) throws Exception {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        AtomicLong pairs = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        long start = System.nanoTime();
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int id = t;
                workers.add(pool.submit(() -> {
                    for (int i = 0; System.nanoTime() < end; i++) {
                        Lock lock = registry.obtain("spring-bench/" + id + "/" + (i % KEYS_PER_THREAD));
                        lock.lock();
                        lock.unlock();
                        pairs.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                w.get(); // an exception in a worker ends the run with it
            }
        } finally {
            pool.shutdownNow();
        }
        return pairs.get() / ((System.nanoTime() - start) / 1e9);
    }
}
