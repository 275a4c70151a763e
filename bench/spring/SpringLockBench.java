import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.concurrent.locks.Lock;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.spring.integration.LeaseholdLockRegistry;

/** Ad-hoc: 16 threads, each lock()/unlock() on its own keys through one LeaseholdLockRegistry, for N seconds. */
public class SpringLockBench {
    public static void main(String[] a) throws Exception {
        String server = a[0]; int seconds = Integer.parseInt(a[1]); int threads = 16;
        try (LeaseholdClient client = LeaseholdClient.create(server)) {
            LeaseholdLockRegistry registry = new LeaseholdLockRegistry(client);
            registry.setRenewal(false);
            for (int phase = 0; phase < 2; phase++) {           // 0 = warm-up (2 s), 1 = measured
                long end = System.nanoTime() + (phase == 0 ? 2_000_000_000L : seconds * 1_000_000_000L);
                AtomicLong pairs = new AtomicLong();
                ExecutorService ex = Executors.newFixedThreadPool(threads);
                long t0 = System.nanoTime();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    ex.submit(() -> {
                        int i = 0;
                        while (System.nanoTime() < end) {
                            Lock l = registry.obtain("sb/" + id + "/" + (i++ % 64));
                            l.lock();
                            l.unlock();
                            pairs.incrementAndGet();
                        }
                        return null;
                    });
                }
                ex.shutdown(); ex.awaitTermination(seconds + 30, TimeUnit.SECONDS);
                double s = (System.nanoTime() - t0) / 1e9;
                if (phase == 1) System.out.printf("lock+unlock pairs/s: %.0f%n", pairs.get() / s);
            }
        }
    }
}
