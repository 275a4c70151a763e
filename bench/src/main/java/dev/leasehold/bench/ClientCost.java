package dev.leasehold.bench;

import java.lang.management.ManagementFactory;
import java.util.Arrays;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;

/**
 * What one uncontended acquire/release pair costs the official client (bench/NOTES.md, "The
 * client's cost per pair"): bytes allocated and CPU time of the whole client JVM per pair, one
 * thread doing blocking {@code acquire(key, 0, lease)} and {@code release()} on its own keys.
 * Both are counts, not timings, so they hold on a loaded machine far better than a rate does:
 * allocation is summed over every thread of the JVM ({@code ThreadMXBean.getThreadAllocatedBytes}),
 * CPU is the process's ({@code OperatingSystemMXBean.getProcessCpuTime}). Rounds of
 * {@code --pairs} after {@code --warmup} pairs; every loop is bounded by its count.
 *
 * <p>Usage: {@code ClientCost --server HOST:PORT [--pairs 200000] [--warmup 200000] [--rounds 5]}
 */
final class ClientCost {

    private ClientCost() {
    }

    public static void main(String[] args) throws Exception {
        String server = arg(args, "--server", "127.0.0.1:7420");
        int pairs = Integer.parseInt(arg(args, "--pairs", "200000"));
        int warmup = Integer.parseInt(arg(args, "--warmup", "200000"));
        int rounds = Integer.parseInt(arg(args, "--rounds", "5"));
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String[] keys = new String[1024];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "cost/" + Long.toString(System.nanoTime() % 1_000_000, 36) + "/" + i;
        }
        try (LeaseholdClient client = LeaseholdClient.create(server)) {
            run(client, keys, warmup);
            for (int r = 0; r < rounds; r++) {
                long bytes0 = allocated(threads);
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                run(client, keys, pairs);
                long t1 = System.nanoTime();
                long cpu1 = os.getProcessCpuTime();
                long bytes1 = allocated(threads);
                System.out.printf("round %d: %,.0f bytes allocated per pair, %.1f us client CPU per pair, %.1f us wall per pair%n",
                        r + 1, (bytes1 - bytes0) / (double) pairs, (cpu1 - cpu0) / 1e3 / pairs, (t1 - t0) / 1e3 / pairs);
            }
        }
    }

    private static void run(LeaseholdClient client, String[] keys, int pairs) {
        for (int i = 0; i < pairs; i++) {
            AcquireOutcome o = client.acquire(keys[i & (keys.length - 1)], 0, 30);
            if (!(o instanceof AcquireOutcome.Acquired a)) {
                throw new IllegalStateException("not granted: " + o);
            }
            a.ticket().release();
        }
    }

    /** Bytes allocated so far by every live thread of this JVM. */
    private static long allocated(com.sun.management.ThreadMXBean threads) {
        long[] ids = threads.getAllThreadIds();
        return Arrays.stream(threads.getThreadAllocatedBytes(ids)).filter(b -> b > 0).sum();
    }

    private static String arg(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }
}
