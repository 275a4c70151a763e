package dev.leasehold.bench;

import static dev.leasehold.bench.ResultTable.f1;
import static dev.leasehold.bench.ResultTable.f2;
import static dev.leasehold.bench.ResultTable.pct;
import static dev.leasehold.bench.ResultTable.us;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.bench.Load.Run;
import dev.leasehold.bench.Load.Stats;
import dev.leasehold.bench.Load.Step;

/**
 * Runs the workloads of BENCHMARKS.md against a Leasehold server and a Redis server that are already
 * running (bench/run.sh starts and stops them), alternating between the two so that both see
 * the same machine noise, and prints one table with Leasehold/Redis ratios.
 *
 * <p>Every load loop is bounded in time (warm-up + duration) and every blocking read has a
 * socket timeout. Usage: see {@link BenchTargets#usage()}.
 */
public final class Bench {

    // ----------------------------------------------------------------- options

    final Map<String, String> opts = new LinkedHashMap<>();

    String host() {
        return opt("host", "127.0.0.1");
    }

    String opt(String name, String def) {
        return opts.getOrDefault(name, def);
    }

    int intOpt(String name, int def) {
        return Integer.parseInt(opt(name, Integer.toString(def)));
    }

    // ----------------------------------------------------------------- targets

    /** A server under test: how to connect, and its process for CPU/RSS. */
    record Target(String name, int port, String pid, boolean jvm) {
    }

    /** Run on the coordinating thread when the measured window starts and ends (or null). */
    Runnable atMeasureStart;
    Runnable atMeasureEnd;

    /** Redis only: the client's sleep between SET NX attempts of a waiting acquire. */
    long pollMicros = 1000;

    /** Shared library clients (one per target, as an application would hold them), closed after the run. */
    final Map<String, Object> shared = new LinkedHashMap<>();

    LockConn connect(Target t) throws IOException {
        return switch (t.name()) {
            case "leasehold", "cluster" -> new LeaseholdConn(host(), t.port());
            case "client" -> new ClientConn((dev.leasehold.client.LeaseholdClient) shared.computeIfAbsent("client",
                    k -> dev.leasehold.client.LeaseholdClient.create(clientOptions(), host() + ":" + t.port())));
            case "redisson", "redisson-fair" -> new RedissonConn(redisson(t), t.name().equals("redisson-fair"));
            case "cluster-client" -> new ClientConn((dev.leasehold.client.LeaseholdClient) shared.computeIfAbsent(
                    "cluster-client", k -> dev.leasehold.client.LeaseholdClient.create(clientOptions(),
                            opt("cluster-addresses", "").split(","))));
            case "etcd" -> new EtcdConn(etcd(), LEASE);
            default -> new RedisConn(host(), t.port(), pollMicros);
        };
    }

    /** The official client's options: its defaults, or {@code --client-pool N} sessions. */
    dev.leasehold.client.ClientOptions clientOptions() {
        int pool = intOpt("client-pool", 0);
        return pool > 0 ? dev.leasehold.client.ClientOptions.builder().poolSize(pool).build()
                : dev.leasehold.client.ClientOptions.defaults();
    }

    /** One jetcd client for every load thread, as an application holds it. */
    io.etcd.jetcd.Client etcd() {
        return (io.etcd.jetcd.Client) shared.computeIfAbsent("etcd", k -> io.etcd.jetcd.Client.builder()
                .endpoints(opt("etcd-endpoints", "").split(",")).build());
    }

    org.redisson.api.RedissonClient redisson(Target t) {
        return (org.redisson.api.RedissonClient) shared.computeIfAbsent("redisson", k -> {
            org.redisson.config.Config config = new org.redisson.config.Config();
            config.useSingleServer().setAddress("redis://" + host() + ":" + t.port());
            return org.redisson.Redisson.create(config);
        });
    }

    // ----------------------------------------------------------------- timed loops

    Run timed(Target t, int threads, Step step) throws Exception {
        int warmup = intOpt("warmup", 3);
        int duration = intOpt("duration", 10);
        return timed(t, threads, warmup, duration, step);
    }

    Run timed(Target t, int threads, int warmupSeconds, int durationSeconds, Step step) throws Exception {
        List<LockConn> conns = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                conns.add(connect(t));
            }
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
            long measureStart = start + TimeUnit.SECONDS.toNanos(warmupSeconds);
            long end = measureStart + TimeUnit.SECONDS.toNanos(durationSeconds);
            Run run = new Run();
            List<Thread> workers = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int i = 0; i < threads; i++) {
                Stats s = new Stats();
                run.perThread.add(s);
                LockConn c = conns.get(i);
                int index = i;
                Thread th = new Thread(() -> {
                    try {
                        sleepUntil(start);
                        int iteration = 0;
                        while (true) {
                            long now = System.nanoTime();
                            if (now - end >= 0 || failure.get() != null) {
                                break;
                            }
                            s.recording = now - measureStart >= 0;
                            long done = step.run(c, s, index, iteration++);
                            if (s.recording) {
                                s.pairs += done;
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "load-" + t.name() + "-" + i);
                th.setDaemon(true);
                workers.add(th);
                th.start();
            }
            sleepUntil(measureStart);
            if (atMeasureStart != null) {
                atMeasureStart.run();
            }
            double[] us0 = Proc.cpuUserSys(t.pid());
            double cpu0 = us0[0] + us0[1];
            double self0 = Proc.cpuSeconds("self");
            long m0 = System.nanoTime();
            sleepUntil(end);
            double[] us1 = Proc.cpuUserSys(t.pid());
            double cpu1 = us1[0] + us1[1];
            double self1 = Proc.cpuSeconds("self");
            long m1 = System.nanoTime();
            if (atMeasureEnd != null) {
                atMeasureEnd.run();
            }
            for (Thread th : workers) {
                th.join(TimeUnit.SECONDS.toMillis(30)); // W2 waits are bounded by their 10 s wait
            }
            if (failure.get() != null) {
                throw new IllegalStateException(t.name() + ": load thread failed: " + failure.get(), failure.get());
            }
            run.seconds = (m1 - m0) / 1e9;
            run.serverCpu = cpu1 - cpu0;
            run.serverSys = us1[1] - us0[1];
            run.clientCpu = self1 - self0;
            run.serverRssAfter = Proc.rssBytes(t.pid());
            for (Stats s : run.perThread) {
                run.total.merge(s);
            }
            return run;
        } finally {
            for (LockConn c : conns) {
                try {
                    c.close();
                } catch (IOException ignored) {
                }
            }
        }
    }

    static void sleepUntil(long nanoTime) throws InterruptedException {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    static byte[][] keys(String prefix, int n) {
        byte[][] k = new byte[n][];
        for (int i = 0; i < n; i++) {
            k[i] = (prefix + i).getBytes(StandardCharsets.UTF_8);
        }
        return k;
    }

    // ----------------------------------------------------------------- workloads

    static final int LEASE = 30;

    /** One session, one thread: Ping, then acquire + release of a free key, alternating. */
    Run latency(Target t) throws Exception {
        byte[][] keys = keys("bench/lat/" + System.nanoTime() + "/", 16);
        return timed(t, 1, 3, intOpt("latency-seconds", 5), (c, s, th, i) -> {
            long t0 = System.nanoTime();
            c.ping();
            long t1 = System.nanoTime();
            long token = c.acquire(keys[i & 15], 0, LEASE);
            long t2 = System.nanoTime();
            if (token <= 0) {
                throw new IOException("uncontended acquire not granted: " + token);
            }
            c.release(keys[i & 15], token);
            long t3 = System.nanoTime();
            if (s.recording) {
                s.ping.recordValue(t1 - t0);
                s.acquire.recordValue(t2 - t1);
                s.release.recordValue(t3 - t2);
            }
            return 1;
        });
    }

    /** W1 synchronous: N threads, own keys, acquire(wait 0, lease 30 s) then release, one in flight. */
    Run w1(Target t) throws Exception {
        return w1(t, intOpt("warmup", 3), intOpt("duration", 10));
    }

    Run w1(Target t, int warmupSeconds, int durationSeconds) throws Exception {
        int threads = intOpt("threads", 16);
        int perThread = intOpt("keys", 64);
        String run = "bench/w1/" + System.nanoTime() + "/";
        byte[][][] keys = new byte[threads][][];
        for (int i = 0; i < threads; i++) {
            keys[i] = keys(run + i + "/", perThread);
        }
        return timed(t, threads, warmupSeconds, durationSeconds, new Step() {
            @Override
            public long run(LockConn c, Stats s, int th, int i) throws IOException {
                byte[][] mine = keys[th];
                byte[] key = mine[i % mine.length];
                long t0 = System.nanoTime();
                long token = c.acquire(key, 0, LEASE);
                long t1 = System.nanoTime();
                if (token <= 0) {
                    s.notGranted++;
                    return 0;
                }
                c.release(key, token);
                long t2 = System.nanoTime();
                if (s.recording) {
                    s.acquire.recordValue(t1 - t0);
                    s.release.recordValue(t2 - t1);
                }
                return 1;
            }
        });
    }

    /** W1 pipelined: as W1, but each connection sends {@code depth} acquires, then their releases. */
    Run w1Pipelined(Target t) throws Exception {
        int threads = intOpt("threads", 16);
        int depth = intOpt("depth", 32);
        int perThread = Math.max(intOpt("keys", 64), depth) / depth * depth;
        String run = "bench/w1p/" + System.nanoTime() + "/";
        byte[][][] keys = new byte[threads][][];
        for (int i = 0; i < threads; i++) {
            keys[i] = keys(run + i + "/", perThread);
        }
        ThreadLocal<long[]> tokens = ThreadLocal.withInitial(() -> new long[depth]);
        return timed(t, threads, (c, s, th, i) -> {
            byte[][] mine = keys[th];
            int from = (i * depth) % mine.length;
            long[] tok = tokens.get();
            long t0 = System.nanoTime();
            c.acquireBatch(mine, from, depth, LEASE, tok);
            long t1 = System.nanoTime();
            int released = c.releaseBatch(mine, from, depth, tok);
            long t2 = System.nanoTime();
            if (s.recording) {
                s.acquire.recordValue(t1 - t0);
                s.release.recordValue(t2 - t1);
                s.notGranted += depth - released;
            }
            return released;
        });
    }

    /** W2: waiters on one key, acquire(wait 10 s) then release at once. */
    Run w2(Target t) throws Exception {
        byte[] key = ("bench/w2/" + System.nanoTime()).getBytes(StandardCharsets.UTF_8);
        // Who holds the key now. Swapped while holding the lock, so the sequence is exact: a grant
        // counts as a hand-off when the previous holder was another worker (not a re-acquire).
        java.util.concurrent.atomic.AtomicInteger lastHolder = new java.util.concurrent.atomic.AtomicInteger(-1);
        // When the last holder started its release: the next grant to another worker minus this
        // is the hand-off gap as a user sees it (one loopback round trip plus the server's work).
        java.util.concurrent.atomic.AtomicLong releaseSentAt = new java.util.concurrent.atomic.AtomicLong();
        return timed(t, intOpt("w2-waiters", 16), (c, s, th, i) -> {
            long t0 = System.nanoTime();
            long token = c.acquire(key, 10, LEASE);
            long t1 = System.nanoTime();
            if (token <= 0) {
                s.notGranted++;
                return 0;
            }
            int previous = lastHolder.getAndSet(th);
            long gap = t1 - releaseSentAt.get();
            releaseSentAt.set(System.nanoTime());
            c.release(key, token);
            if (s.recording) {
                s.acquire.recordValue(t1 - t0);
                s.grants++;
                if (previous != th) {
                    s.handoffs++;
                    if (previous >= 0 && gap > 0) {
                        s.gap.recordValue(gap);
                    }
                }
            }
            return 1;
        });
    }

    /**
     * For a target on Leasehold when its HTTP port is known: arms the measured window to scrape the
     * server's hand-off histogram at its start ([0]) and end ([1]); else null.
     */
    @SuppressWarnings("unchecked")
    Map<Double, Double>[] serverHandoffScrapes(Target t) {
        String http = opt("leasehold-http", null);
        if (http == null || !BenchTargets.server(t.name()).equals("leasehold")) {
            return null;
        }
        HandoffScrape scrape = new HandoffScrape(host(), Integer.parseInt(http));
        Map<Double, Double>[] out = new Map[2];
        atMeasureStart = () -> out[0] = scrapeOrNull(scrape);
        atMeasureEnd = () -> out[1] = scrapeOrNull(scrape);
        return out;
    }

    static Map<Double, Double> scrapeOrNull(HandoffScrape scrape) {
        try {
            return scrape.buckets();
        } catch (IOException | InterruptedException e) {
            System.out.println("  (could not read the server's hand-off histogram: " + e + ")");
            return null;
        }
    }

    /** Jain's fairness index over per-worker grants: 1.0 when all got the same number. */
    static double jain(List<Stats> perThread) {
        double sum = 0;
        double sumSq = 0;
        for (Stats s : perThread) {
            sum += s.grants;
            sumSq += (double) s.grants * s.grants;
        }
        return sumSq == 0 ? Double.NaN : sum * sum / (perThread.size() * sumSq);
    }

    // ----------------------------------------------------------------- report

    final ResultTable results = new ResultTable();

    void put(Target t, String key, Object value) {
        results.put(t.name(), key, value);
    }

    void record(Target t, String workload, Run r) {
        System.out.printf(Locale.ROOT,
                "  %-9s %-8s %10.0f pairs/s  acq p50 %7.1f us p99 %8.1f us  rel p50 %7.1f us  server CPU %6.2f s/M pairs  client CPU %6.2f s/M  notGranted %d  RSS %d MB%n",
                t.name(), workload, r.rate(), us(r.total.acquire, 50), us(r.total.acquire, 99),
                us(r.total.release, 50), r.cpuPerMillion(), r.clientCpuPerMillion(), r.total.notGranted,
                r.serverRssAfter >> 20);
    }

    public static void main(String[] args) throws Exception {
        Bench b = new Bench();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println(BenchTargets.usage());
                System.exit(2);
            }
            b.opts.put(args[i].substring(2), args[++i]);
        }
        b.run();
    }

    void run() throws Exception {
        List<Target> targets = new ArrayList<>();
        String defaultTargets = "leasehold,client,redis,redisson,redisson-fair"
                + (opt("cluster-port", null) != null ? ",cluster" : "")
                + (opt("cluster-addresses", null) != null ? ",cluster-client" : "")
                + (opt("etcd-endpoints", null) != null ? ",etcd" : "");
        for (String name : opt("targets", defaultTargets).split(",")) {
            String server = BenchTargets.server(name);
            targets.add(new Target(name, intOpt(server + "-port", 0), opt(server + "-pid", "self"),
                    !server.equals("redis") && !server.equals("etcd")));
        }
        List<String> workloads = List.of(opt("workloads", "w1,lat,w4,w1p,w2,w3,w2sweep").split(","));
        String loadBefore = Proc.loadAverage();
        System.out.println("load average before: " + loadBefore);
        int prewarm = intOpt("prewarm", 0);
        if (prewarm > 0) {
            for (Target t : targets) {
                if (BenchTargets.supports(t.name(), "w1")) {
                    System.out.printf("prewarm %s: %d s of W1 sync, not recorded ...%n", t.name(), prewarm);
                    Run r = w1(t, prewarm, 1);
                    System.out.printf(Locale.ROOT, "  %-9s prewarm done, last second %.0f pairs/s%n", t.name(), r.rate());
                }
            }
        }
        Map<String, Run> w1Runs = new LinkedHashMap<>();
        for (String w : workloads) {
            for (Target t : targets) {
                if (!BenchTargets.supports(t.name(), w)) {
                    continue;
                }
                System.out.printf("%s %s ...%n", w, t.name());
                switch (w) {
                    case "lat" -> {
                        Run r = latency(t);
                        System.out.printf(Locale.ROOT, "  %-9s ping p50 %.1f us p99 %.1f us; acquire p50 %.1f us p99 %.1f us; release p50 %.1f us p99 %.1f us%n",
                                t.name(), us(r.total.ping, 50), us(r.total.ping, 99), us(r.total.acquire, 50),
                                us(r.total.acquire, 99), us(r.total.release, 50), us(r.total.release, 99));
                        put(t, "Ping p50 / p99, one session (µs)", f1(us(r.total.ping, 50)) + " / " + f1(us(r.total.ping, 99)));
                        put(t, "Acquire p50 / p99, one session, free key (µs)", f1(us(r.total.acquire, 50)) + " / " + f1(us(r.total.acquire, 99)));
                        put(t, "Release p50 / p99, one session (µs)", f1(us(r.total.release, 50)) + " / " + f1(us(r.total.release, 99)));
                        put(t, "Acquire p50 ÷ Ping p50", f2(us(r.total.acquire, 50) / us(r.total.ping, 50)));
                        put(t, "#ping", us(r.total.ping, 50));
                        put(t, "#acq", us(r.total.acquire, 50));
                    }
                    case "w1" -> {
                        Run r = w1(t);
                        record(t, "W1 sync", r);
                        w1Runs.put(t.name(), r);
                        put(t, "W1 sync: pairs/s (" + intOpt("threads", 16) + " threads)", r.rate());
                        put(t, "W1 sync: acquire p50 / p99 (µs)", f1(us(r.total.acquire, 50)) + " / " + f1(us(r.total.acquire, 99)));
                        put(t, "W1 sync: server CPU s per 1M pairs", r.cpuPerMillion());
                        put(t, "W1 sync: share of server CPU in the kernel", pct(r.serverSys / r.serverCpu));
                        put(t, "W1 sync: load-generator CPU s per 1M pairs", r.clientCpuPerMillion());
                    }
                    case "w1p" -> {
                        Run r = w1Pipelined(t);
                        record(t, "W1 pipe", r);
                        put(t, "W1 pipelined " + intOpt("depth", 32) + ": pairs/s", r.rate());
                        put(t, "W1 pipelined: batch round trip p50 / p99 (µs)", f1(us(r.total.acquire, 50)) + " / " + f1(us(r.total.acquire, 99)));
                        put(t, "W1 pipelined: server CPU s per 1M pairs", r.cpuPerMillion());
                        put(t, "W1 pipelined: share of server CPU in the kernel", pct(r.serverSys / r.serverCpu));
                        put(t, "W1 pipelined: load-generator CPU s per 1M pairs", r.clientCpuPerMillion());
                    }
                    case "w2sweep" -> {
                        if (!t.name().equals("redis")) {
                            continue; // Leasehold has a server-side queue: nothing to sweep
                        }
                        for (String poll : opt("w2-sweep", "0,100,2000").split(",")) {
                            pollMicros = Long.parseLong(poll);
                            Run r = w2(t);
                            pollMicros = Long.parseLong(opt("w2-poll-micros", "1000"));
                            System.out.printf(Locale.ROOT, "  %-9s W2 poll %s us: %.0f acquisitions/s, %.0f hand-offs/s, Jain %.4f%n",
                                    t.name(), poll, r.rate(), r.total.handoffs / r.seconds, jain(r.perThread));
                            put(t, "W2 Redis, poll sleep " + poll + " µs: acquisitions/s · hand-offs/s · Jain",
                                    String.format(Locale.ROOT, "%,.0f · %,.0f · %.3f", r.rate(), r.total.handoffs / r.seconds, jain(r.perThread)));
                        }
                    }
                    case "w2" -> {
                        pollMicros = Long.parseLong(opt("w2-poll-micros", "1000"));
                        Map<Double, Double>[] scrapes = serverHandoffScrapes(t);
                        Run r;
                        try {
                            r = w2(t);
                        } finally {
                            atMeasureStart = null;
                            atMeasureEnd = null;
                        }
                        double jain = jain(r.perThread);
                        long min = Long.MAX_VALUE;
                        long max = 0;
                        for (Stats s : r.perThread) {
                            min = Math.min(min, s.grants);
                            max = Math.max(max, s.grants);
                        }
                        System.out.printf(Locale.ROOT,
                                "  %-9s W2 %10.0f acquisitions/s  %.0f hand-offs/s  wait p50 %.2f ms p99 %.2f ms max %.2f ms  Jain %.4f  per worker %d..%d  not granted %d  server CPU %.2f s/M%n",
                                t.name(), r.rate(), r.total.handoffs / r.seconds, us(r.total.acquire, 50) / 1000, us(r.total.acquire, 99) / 1000,
                                r.total.acquire.getMaxValue() / 1e6, jain, min, max, r.total.notGranted, r.cpuPerMillion());
                        put(t, "W2 contended (" + r.perThread.size() + " waiters, 1 key): acquisitions/s", r.rate());
                        put(t, "W2: hand-offs/s (grant to another worker than the last holder)", r.total.handoffs / r.seconds);
                        put(t, "W2: wait p50 / p99 / max (ms)", f2(us(r.total.acquire, 50) / 1000) + " / "
                                + f2(us(r.total.acquire, 99) / 1000) + " / " + f2(r.total.acquire.getMaxValue() / 1e6));
                        put(t, "W2: hand-off gap p50 / p99, release sent → next worker's grant returned (µs)",
                                f1(us(r.total.gap, 50)) + " / " + f1(us(r.total.gap, 99)));
                        if (scrapes != null && scrapes[0] != null && scrapes[1] != null) {
                            double[] gap = HandoffScrape.percentiles(scrapes[0], scrapes[1]);
                            Object ping = results.get("#ping", "leasehold");
                            System.out.printf(Locale.ROOT, "  %-9s W2 server hand-off gap p50 %.1f us p99 %.1f us (%.0f samples)%n",
                                    t.name(), gap[0], gap[1], gap[2]);
                            put(t, "W2: server hand-off gap p50 / p99, Release read → A flushed (µs, leasehold_handoff_seconds)",
                                    f1(gap[0]) + " / " + f1(gap[1]));
                            if (ping instanceof Double p) {
                                put(t, "W2: server hand-off gap p50 ÷ raw Ping round trip p50 (lat)", gap[0] / p);
                            }
                        }
                        put(t, "W2: Jain's index (grants per worker min..max)", String.format(Locale.ROOT, "%.4f (%d..%d)", jain, min, max));
                        put(t, "W2: server CPU s per 1M hand-offs", r.cpuPerMillion());
                    }
                    case "w3" -> {
                        MemoryWorkloads.Held h = new MemoryWorkloads(this).w3(t);
                        System.out.printf(Locale.ROOT,
                                "  %-9s W3 %d locks taken in %.2f s: RSS +%d B (%.0f B/lock); %s +%d B (%.0f B/lock)%n",
                                t.name(), h.locks(), h.seconds(), h.rssDelta(), h.rssPerLock(), h.structName(),
                                h.structDelta(), h.structPerLock());
                        put(t, "W3: RSS per held lock at " + h.locks() / 1000 + " k (B)", h.rssPerLock());
                        put(t, "W3: RSS per held lock, both readings after a full GC (B)",
                                t.jvm() ? (double) h.rssDeltaAfterGc() / h.locks() : null);
                        put(t, "W3: data per held lock (B): live heap / Redis used_memory", h.structPerLock());
                    }
                    case "w4" -> {
                        MemoryWorkloads.Sessions s = new MemoryWorkloads(this).w4(t);
                        record(t, "W4+W1", s.w1());
                        double change = s.change() * 100;
                        System.out.printf(Locale.ROOT, "  %-9s W4 %d idle sessions: RSS +%d MB (%.0f B/session), data +%.0f B/session; W1 %.0f pairs/s between %.0f and %.0f without (%+.1f %%)%n",
                                t.name(), s.sessions(), s.rssDelta() >> 20, (double) s.rssDelta() / s.sessions(),
                                (double) s.structDelta() / s.sessions(), s.w1().rate(), s.before().rate(), s.after().rate(), change);
                        put(t, "W4: RSS per idle session (B)", (double) s.rssDelta() / s.sessions());
                        put(t, "W4: data per idle session (B): live heap / Redis used_memory", (double) s.structDelta() / s.sessions());
                        put(t, "W4: W1 sync pairs/s without · with " + s.sessions() / 1000 + " k idle sessions · without",
                                String.format(Locale.ROOT, "%,.0f · **%,.0f** · %,.0f", s.before().rate(), s.w1().rate(), s.after().rate()));
                        put(t, "W4: change with idle sessions (vs mean of the runs before and after)", String.format(Locale.ROOT, "%+.1f %%", change));
                    }
                    default -> throw new IllegalArgumentException("unknown workload " + w);
                }
            }
        }
        for (Object c : shared.values()) {
            if (c instanceof org.redisson.api.RedissonClient r) {
                r.shutdown();
            } else if (c instanceof AutoCloseable a) {
                a.close();
            }
        }
        shared.clear();
        String loadAfter = Proc.loadAverage();
        System.out.println("load average after: " + loadAfter);
        String table = results.table(targets.stream().map(Target::name).toList(), loadBefore, loadAfter);
        System.out.println();
        System.out.println(table);
        String out = opt("out", null);
        if (out != null) {
            Files.writeString(Path.of(out), table);
        }
    }
}
