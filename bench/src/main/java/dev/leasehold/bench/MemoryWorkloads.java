package dev.leasehold.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.bench.Bench.Target;
import dev.leasehold.bench.Load.Run;

/**
 * {@link Bench}'s memory workloads: W3 (hold many keys, memory per held lock) and W4 (idle
 * sessions: memory per session, and W1 beside them).
 */
final class MemoryWorkloads {

    private final Bench bench;

    MemoryWorkloads(Bench bench) {
        this.bench = bench;
    }

    /** W3 result. */
    record Held(long locks, double seconds, long rssDelta, long rssDeltaAfterGc, long structDelta, String structName) {
        double rssPerLock() {
            return (double) rssDelta / locks;
        }

        double structPerLock() {
            return (double) structDelta / locks;
        }
    }

    /** W3: take {@code w3-keys} distinct keys, hold them, measure memory, release them all. */
    Held w3(Target t) throws Exception {
        int n = bench.intOpt("w3-keys", 200_000);
        int batch = 500;
        byte[][] keys = Bench.keys("bench/w3/" + (System.nanoTime() % 1000) + "/", n);
        long[][] tokens = new long[n / batch + 1][];
        try (LockConn c = bench.connect(t)) {
            long struct0 = structBytes(t, c);
            long rss0 = Proc.rssBytes(t.pid());
            long t0 = System.nanoTime();
            long granted = 0;
            for (int from = 0, b = 0; from < n; from += batch, b++) {
                int k = Math.min(batch, n - from);
                tokens[b] = new long[k];
                c.acquireBatch(keys, from, k, 255, tokens[b]);
                for (long tok : tokens[b]) {
                    if (tok > 0) {
                        granted++;
                    }
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            Thread.sleep(500);
            long rss1 = Proc.rssBytes(t.pid());
            long struct1 = structBytes(t, c);
            // JVM: struct0 and struct1 each ran a full GC, so rss0 and rss2 are both read in the
            // heap state the collector settles on after a full GC (for Redis: plain RSS again).
            long rss2 = Proc.rssBytes(t.pid());
            for (int from = 0, b = 0; from < n; from += batch, b++) {
                int k = Math.min(batch, n - from);
                c.releaseBatch(keys, from, k, tokens[b]);
            }
            if (granted != n) {
                System.out.printf("  WARNING %s W3: only %d of %d keys granted%n", t.name(), granted, n);
            }
            return new Held(granted, seconds, rss1 - rss0, rss2 - rss0, struct1 - struct0,
                    t.jvm() ? "live heap (after full GC)" : "used_memory (INFO)");
        }
    }

    /** Live heap bytes (JVM, full GC first) or Redis used_memory. */
    long structBytes(Target t, LockConn c) {
        if (t.jvm()) {
            return Proc.liveHeapBytes(t.pid());
        }
        String info = ((RedisConn) c).jedis().info("memory");
        for (String l : info.split("\r?\n")) {
            if (l.startsWith("used_memory:")) {
                return Long.parseLong(l.substring("used_memory:".length()).trim());
            }
        }
        return -1;
    }

    /** W4 result. */
    record Sessions(int sessions, long rssDelta, long structDelta, Run before, Run w1, Run after) {
        /** W1 rate next to the idle sessions against the mean of the runs just before and after. */
        double change() {
            return w1.rate() / ((before.rate() + after.rate()) / 2) - 1;
        }
    }

    /** W4: open idle sessions (each proven up by one ping), then run W1 synchronous next to them. */
    Sessions w4(Target t) throws Exception {
        int n = bench.intOpt("w4-sessions", 10_000);
        List<Socket> idle = new ArrayList<>(n);
        byte[] ping = t.name().equals("leasehold")
                ? new byte[] { 'P', 0, 0, 0, 0, 0, 0, 0, 1, '\n' }
                : "*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII);
        int answerBytes = t.name().equals("leasehold") ? 10 : 7; // "+PONG\r\n"
        Run before = bench.w1(t);
        long struct0;
        try (LockConn c = bench.connect(t)) {
            struct0 = structBytes(t, c);
        }
        long rss0 = Proc.rssBytes(t.pid());
        long rss1;
        long struct1;
        Run run;
        try {
            byte[] buf = new byte[16];
            for (int i = 0; i < n; i++) {
                Socket s = new Socket();
                idle.add(s);
                s.connect(new InetSocketAddress(bench.host(), t.port()), 5000);
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write(ping);
                InputStream in = s.getInputStream();
                int got = 0;
                while (got < answerBytes) {
                    int r = in.read(buf, got, answerBytes - got);
                    if (r < 0) {
                        throw new IOException(t.name() + " closed idle session " + i + " (connection limit?)");
                    }
                    got += r;
                }
            }
            Thread.sleep(500);
            rss1 = Proc.rssBytes(t.pid());
            try (LockConn c = bench.connect(t)) {
                struct1 = structBytes(t, c);
            }
            run = bench.w1(t);
        } finally {
            for (Socket s : idle) {
                try {
                    s.close();
                } catch (IOException ignored) {
                }
            }
        }
        Thread.sleep(500);
        Run after = bench.w1(t);
        return new Sessions(n, rss1 - rss0, struct1 - struct0, before, run, after);
    }
}
