package dev.leasehold.bench;

import static dev.leasehold.bench.SharedReport.f0;
import static dev.leasehold.bench.SharedReport.f1;
import static dev.leasehold.bench.SharedReport.f2;
import static dev.leasehold.bench.SharedReport.jain;
import static dev.leasehold.bench.SharedReport.minMax;
import static dev.leasehold.bench.SharedReport.ms;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

import org.HdrHistogram.Histogram;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Ticket;

/**
 * W5 of BENCHMARKS.md: shared holds. W5a is a read/write lock (16 reader and 2 writer threads
 * on one key), W5b a semaphore of 4 permits (16 threads on one key), each through the official
 * client (one shared {@link LeaseholdClient}: {@code acquireShared(key, 0 | 4, …)} and, for the
 * writers, {@code acquire}) and through Redisson on the same Redis ({@link RReadWriteLock};
 * {@link RPermitExpirableSemaphore}, whose permits have leases as Leasehold's do, and
 * {@link RSemaphore} for reference). Each operation: acquire (wait up to 10 s, lease 10 s), a
 * fixed busy critical section, release.
 *
 * <p>While it measures, an in-memory checker watches every critical section: a writer beside a
 * reader or another writer, or more than the permits at once, is a violation. Fairness of W5a
 * is measured from the generator: how many reader grants returned while one writer waited, and
 * how many reader grants overtook a waiting writer (the reader's request began at least
 * {@code --overtake-margin-ms} after the writer's and was granted while that writer still
 * waited). The shape is fixed (no random choices), so there is no seed. Every run is bounded:
 * warm-up + duration per target, and every wait by its 10 s.
 *
 * <p>Usage: see {@link #usage()}; bench/w5.sh starts the servers and runs it.
 */
public final class SharedBench {

    static final int WAIT_SECONDS = 10;
    static final int LEASE_SECONDS = 10;

    final Map<String, String> opts = new LinkedHashMap<>();
    final Map<String, Object> shared = new LinkedHashMap<>();

    static String usage() {
        return """
                usage: SharedBench --leasehold-port P --leasehold-pid PID --redis-port P --redis-pid PID [options]
                  --host 127.0.0.1         loopback address of both servers
                  --readers 16 --writers 2 W5a threads on one key
                  --sem-threads 16         W5b threads on one key
                  --permits 4              W5b semaphore size
                  --hold-micros 50         busy critical section of every hold (readers, writers, permits)
                  --duration 20 --warmup 3 seconds measured / not recorded, per target and workload
                  --overtake-margin-ms 10  a reader overtook a writer if its request began this long
                                           after the writer's and it was granted while the writer waited
                  --workloads w5a,w5b
                  --w5a-targets client,redisson
                  --w5b-targets client,redisson-pes,redisson-sem
                  --out FILE               also write the tables (markdown) here
                """;
    }

    String opt(String name, String def) {
        return opts.getOrDefault(name, def);
    }

    int intOpt(String name, int def) {
        return Integer.parseInt(opt(name, Integer.toString(def)));
    }

    // ----------------------------------------------------------------- the targets

    /** One target's shared holds, used by many threads at once; a hold is an opaque handle. */
    interface SharedLocks {
        /** A read hold, or null when the wait ran out. */
        Object read(String key) throws Exception;

        Object write(String key) throws Exception;

        Object permit(String key, int permits) throws Exception;

        void release(Object hold) throws Exception;
    }

    /** The official client: acquireShared(key, 0 | permits, …) and acquire(…) for the writer. */
    record LeaseholdShared(LeaseholdClient client) implements SharedLocks {
        @Override
        public Object read(String key) {
            return ticket(client.acquireShared(key, 0, WAIT_SECONDS, LEASE_SECONDS));
        }

        @Override
        public Object write(String key) {
            return ticket(client.acquire(key, WAIT_SECONDS, LEASE_SECONDS));
        }

        @Override
        public Object permit(String key, int permits) {
            return ticket(client.acquireShared(key, permits, WAIT_SECONDS, LEASE_SECONDS));
        }

        static Ticket ticket(AcquireOutcome o) {
            if (o instanceof AcquireOutcome.Acquired a) {
                return a.ticket();
            }
            if (o instanceof AcquireOutcome.TimedOut) {
                return null;
            }
            throw new IllegalStateException("official client: " + o);
        }

        @Override
        public void release(Object hold) {
            ((Ticket) hold).release();
        }
    }

    /**
     * Redisson on one shared {@link RedissonClient}: RReadWriteLock's views (held by the calling
     * thread, released by it), and a semaphore: {@code pes} = RPermitExpirableSemaphore (a permit
     * id with a lease), else RSemaphore (no lease: a holder that dies keeps its permit).
     */
    record RedissonShared(RedissonClient redisson, boolean pes) implements SharedLocks {
        @Override
        public Object read(String key) throws InterruptedException {
            var lock = redisson.getReadWriteLock(key).readLock();
            return lock.tryLock(WAIT_SECONDS, LEASE_SECONDS, TimeUnit.SECONDS) ? lock : null;
        }

        @Override
        public Object write(String key) throws InterruptedException {
            var lock = redisson.getReadWriteLock(key).writeLock();
            return lock.tryLock(WAIT_SECONDS, LEASE_SECONDS, TimeUnit.SECONDS) ? lock : null;
        }

        @Override
        public Object permit(String key, int permits) throws InterruptedException {
            if (pes) {
                RPermitExpirableSemaphore s = redisson.getPermitExpirableSemaphore(key);
                String id = s.tryAcquire(WAIT_SECONDS, LEASE_SECONDS, TimeUnit.SECONDS);
                return id == null ? null : new PermitId(s, id);
            }
            RSemaphore s = redisson.getSemaphore(key);
            return s.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS) ? s : null;
        }

        void setUp(String key, int permits) {
            if (pes) {
                redisson.getPermitExpirableSemaphore(key).trySetPermits(permits);
            } else {
                redisson.getSemaphore(key).trySetPermits(permits);
            }
        }

        @Override
        public void release(Object hold) {
            if (hold instanceof org.redisson.api.RLock l) {
                l.unlock();
            } else if (hold instanceof PermitId p) {
                p.semaphore().release(p.id());
            } else {
                ((RSemaphore) hold).release();
            }
        }
    }

    record PermitId(RPermitExpirableSemaphore semaphore, String id) {
    }

    SharedLocks locks(String target) {
        String host = opt("host", "127.0.0.1");
        return switch (target) {
            case "client" -> new LeaseholdShared((LeaseholdClient) shared.computeIfAbsent("client",
                    k -> LeaseholdClient.create(host + ":" + opt("leasehold-port", "7420"))));
            case "redisson", "redisson-pes", "redisson-sem" -> new RedissonShared(
                    (RedissonClient) shared.computeIfAbsent("redisson", k -> {
                        org.redisson.config.Config config = new org.redisson.config.Config();
                        config.useSingleServer().setAddress("redis://" + host + ":" + opt("redis-port", "6379"));
                        return org.redisson.Redisson.create(config);
                    }), !target.equals("redisson-sem"));
            default -> throw new IllegalArgumentException("unknown target " + target);
        };
    }

    static String display(String target) {
        return switch (target) {
            case "client" -> "Leasehold, official client";
            case "redisson" -> "Redis + Redisson RReadWriteLock";
            case "redisson-pes" -> "Redis + Redisson RPermitExpirableSemaphore";
            case "redisson-sem" -> "Redis + Redisson RSemaphore";
            default -> target;
        };
    }

    String pid(String target) {
        return target.equals("client") ? opt("leasehold-pid", "self") : opt("redis-pid", "self");
    }

    // ----------------------------------------------------------------- measuring

    /** One thread's measurements. */
    static final class Stats {
        final Histogram acquire = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        /** Writers: reader grants returned while this writer waited. */
        final Histogram readersDuringWait = new Histogram(1_000_000, 3);
        long grants;
        long notGranted;
        /** Readers: grants that overtook a writer waiting since at least the margin before the request. */
        long overtakes;
        /** Readers: the same with no margin (includes a writer's request still on its way to the server). */
        long overtakesAny;
    }

    /** The checker and the fairness bookkeeping of one run. */
    static final class Watch {
        final AtomicInteger readers = new AtomicInteger();
        final AtomicInteger writers = new AtomicInteger();
        final AtomicInteger holders = new AtomicInteger();
        final AtomicInteger maxHolders = new AtomicInteger();
        final AtomicLong violations = new AtomicLong();
        final AtomicReference<String> firstViolation = new AtomicReference<>();
        final AtomicLong readerGrants = new AtomicLong();
        /** Per writer: System.nanoTime() when its current wait began, 0 while it does not wait. */
        final AtomicLongArray waitingSince;

        Watch(int writers) {
            this.waitingSince = new AtomicLongArray(Math.max(1, writers));
        }

        void violation(String what) {
            violations.incrementAndGet();
            firstViolation.compareAndSet(null, what);
        }

        /*
         * Sequentially consistent atomics (Dekker): of a reader and a writer whose critical
         * sections overlap, at least one sees the other's increment. A critical section here is
         * from the acquire's return to the release's call, inside the server's grant.
         */
        void enterRead() {
            int r = readers.incrementAndGet();
            maxHolders.accumulateAndGet(r, Math::max);
            if (writers.get() > 0) {
                violation("a reader entered while a writer held");
            }
        }

        void exitRead() {
            readers.decrementAndGet();
        }

        void enterWrite() {
            if (writers.incrementAndGet() > 1) {
                violation("two writers at once");
            }
            if (readers.get() > 0) {
                violation("a writer entered while a reader held");
            }
        }

        void exitWrite() {
            writers.decrementAndGet();
        }

        void enterPermit(int permits) {
            int h = holders.incrementAndGet();
            maxHolders.accumulateAndGet(h, Math::max);
            if (h > permits) {
                violation(h + " holders of " + permits + " permits");
            }
        }

        void exitPermit() {
            holders.decrementAndGet();
        }
    }

    /** What a thread does once: returns whether it was granted. */
    interface Op {
        boolean run(Stats s, boolean recording) throws Exception;
    }

    record Result(List<Stats> perThread, double seconds, double serverCpu, double clientCpu, String label) {
        Stats merged(int from, int to) {
            Stats m = new Stats();
            for (Stats s : perThread.subList(from, to)) {
                m.acquire.add(s.acquire);
                m.readersDuringWait.add(s.readersDuringWait);
                m.grants += s.grants;
                m.notGranted += s.notGranted;
                m.overtakes += s.overtakes;
                m.overtakesAny += s.overtakesAny;
            }
            return m;
        }
    }

    Result run(String label, String target, List<Op> ops) throws Exception {
        int warmup = intOpt("warmup", 3);
        int duration = intOpt("duration", 20);
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        long measureStart = start + TimeUnit.SECONDS.toNanos(warmup);
        long end = measureStart + TimeUnit.SECONDS.toNanos(duration);
        List<Stats> stats = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 0; i < ops.size(); i++) {
            Stats s = new Stats();
            stats.add(s);
            Op op = ops.get(i);
            Thread t = new Thread(() -> {
                try {
                    Bench.sleepUntil(start);
                    while (failure.get() == null) {
                        long now = System.nanoTime();
                        if (now - end >= 0) {
                            break;
                        }
                        op.run(s, now - measureStart >= 0);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, label + "-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        Bench.sleepUntil(measureStart);
        double cpu0 = Proc.cpuSeconds(pid(target));
        double self0 = Proc.cpuSeconds("self");
        long m0 = System.nanoTime();
        Bench.sleepUntil(end);
        double cpu1 = Proc.cpuSeconds(pid(target));
        double self1 = Proc.cpuSeconds("self");
        long m1 = System.nanoTime();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS + 20)); // a wait in progress ends by its 10 s
        }
        for (Thread t : threads) {
            if (t.isAlive()) {
                throw new IllegalStateException(label + ": thread " + t.getName() + " still running 30 s after the end");
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException(label + ": a load thread failed: " + failure.get(), failure.get());
        }
        return new Result(stats, (m1 - m0) / 1e9, cpu1 - cpu0, self1 - self0, label);
    }

    static void busy(long nanos) {
        long until = System.nanoTime() + nanos;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }

    // ----------------------------------------------------------------- W5a: read/write lock

    void w5a(String target, String key) throws Exception {
        SharedLocks locks = locks(target);
        int readers = intOpt("readers", 16);
        int writers = intOpt("writers", 2);
        long hold = TimeUnit.MICROSECONDS.toNanos(intOpt("hold-micros", 50));
        long margin = TimeUnit.MILLISECONDS.toNanos(intOpt("overtake-margin-ms", 10));
        Watch w = new Watch(writers);
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            long[] seen = new long[writers];
            ops.add((s, recording) -> {
                for (int j = 0; j < writers; j++) {
                    seen[j] = w.waitingSince.get(j);
                }
                long t0 = System.nanoTime();
                Object h = locks.read(key);
                long t1 = System.nanoTime();
                if (h == null) {
                    s.notGranted += recording ? 1 : 0;
                    return false;
                }
                w.readerGrants.incrementAndGet();
                boolean overtook = false;
                boolean overtookAny = false;
                for (int j = 0; j < writers; j++) {
                    // that writer already waited when this request began, and still waits now
                    boolean stillWaiting = seen[j] != 0 && w.waitingSince.get(j) == seen[j];
                    overtook |= stillWaiting && t0 - seen[j] >= margin;
                    overtookAny |= stillWaiting;
                }
                w.enterRead();
                busy(hold);
                w.exitRead();
                locks.release(h);
                if (recording) {
                    s.acquire.recordValue(t1 - t0);
                    s.grants++;
                    s.overtakes += overtook ? 1 : 0;
                    s.overtakesAny += overtookAny ? 1 : 0;
                }
                return true;
            });
        }
        for (int i = 0; i < writers; i++) {
            int me = i;
            ops.add((s, recording) -> {
                long before = w.readerGrants.get();
                long t0 = System.nanoTime();
                w.waitingSince.set(me, t0);
                Object h = locks.write(key);
                long t1 = System.nanoTime();
                w.waitingSince.set(me, 0);
                long during = w.readerGrants.get() - before;
                if (recording) {
                    s.readersDuringWait.recordValue(during); // granted or not: the wait ended
                }
                if (h == null) {
                    s.notGranted += recording ? 1 : 0;
                    return false;
                }
                w.enterWrite();
                busy(hold);
                w.exitWrite();
                locks.release(h);
                if (recording) {
                    s.acquire.recordValue(t1 - t0);
                    s.grants++;
                }
                return true;
            });
        }
        Result r = run("w5a-" + target, target, ops);
        Stats rd = r.merged(0, readers);
        Stats wr = r.merged(readers, readers + writers);
        String t = target;
        System.out.printf(Locale.ROOT,
                "  %-13s W5a readers %,.0f/s (p50 %.2f ms p99 %.2f ms, not granted %d), writers %,.1f/s (wait p50 %.2f p99 %.2f max %.2f ms, not granted %d), "
                        + "reader grants during a writer's wait p99 %d max %d, overtakes %d (any %d), max readers %d, violations %d%s, server CPU %.0f %%%n",
                t, rd.grants / r.seconds(), ms(rd.acquire, 50), ms(rd.acquire, 99), rd.notGranted, wr.grants / r.seconds(),
                ms(wr.acquire, 50), ms(wr.acquire, 99), wr.acquire.getMaxValue() / 1e6, wr.notGranted,
                wr.readersDuringWait.getValueAtPercentile(99), wr.readersDuringWait.getMaxValue(), rd.overtakes, rd.overtakesAny,
                w.maxHolders.get(), w.violations.get(), w.firstViolation.get() == null ? "" : " (" + w.firstViolation.get() + ")",
                r.serverCpu() / r.seconds() * 100);
        put("W5a", "reader acquisitions/s (" + readers + " readers)", t, f0(rd.grants / r.seconds()));
        put("W5a", "writer acquisitions/s (" + writers + " writers)", t, f1(wr.grants / r.seconds()));
        put("W5a", "reader acquire p50 / p99 (ms)", t, f2(ms(rd.acquire, 50)) + " / " + f2(ms(rd.acquire, 99)));
        put("W5a", "writer wait p50 / p99 / max, granted writers (ms)", t, wr.grants == 0 ? "– (none granted)"
                : f2(ms(wr.acquire, 50)) + " / " + f2(ms(wr.acquire, 99)) + " / " + f2(wr.acquire.getMaxValue() / 1e6));
        put("W5a", "writer acquires not granted within the 10 s wait", t, Long.toString(wr.notGranted));
        put("W5a", "reader grants while one writer waited (granted or timed out): p50 / p99 / max", t,
                wr.readersDuringWait.getValueAtPercentile(50) + " / " + wr.readersDuringWait.getValueAtPercentile(99)
                        + " / " + wr.readersDuringWait.getMaxValue());
        put("W5a", "reader grants that overtook a waiting writer (request ≥ " + intOpt("overtake-margin-ms", 10)
                + " ms after the writer's began · any)", t, rd.overtakes + " · " + rd.overtakesAny + " of " + rd.grants);
        put("W5a", "most readers inside at once", t, Integer.toString(w.maxHolders.get()));
        put("W5a", "violations (a writer beside a reader or a writer)", t, Long.toString(w.violations.get()));
        put("W5a", "grants per reader thread min..max · per writer thread min..max", t,
                minMax(r.perThread().subList(0, readers)) + " · " + minMax(r.perThread().subList(readers, readers + writers)));
        put("W5a", "server CPU · load-generator CPU (% of one core)", t,
                f0(r.serverCpu() / r.seconds() * 100) + " · " + f0(r.clientCpu() / r.seconds() * 100));
    }

    // ----------------------------------------------------------------- W5b: semaphore

    void w5b(String target, String key) throws Exception {
        SharedLocks locks = locks(target);
        int threads = intOpt("sem-threads", 16);
        int permits = intOpt("permits", 4);
        long hold = TimeUnit.MICROSECONDS.toNanos(intOpt("hold-micros", 50));
        if (locks instanceof RedissonShared rs) {
            rs.setUp(key, permits);
        }
        Watch w = new Watch(0);
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            ops.add((s, recording) -> {
                long t0 = System.nanoTime();
                Object h = locks.permit(key, permits);
                long t1 = System.nanoTime();
                if (h == null) {
                    s.notGranted += recording ? 1 : 0;
                    return false;
                }
                w.enterPermit(permits);
                busy(hold);
                w.exitPermit();
                locks.release(h);
                if (recording) {
                    s.acquire.recordValue(t1 - t0);
                    s.grants++;
                }
                return true;
            });
        }
        Result r = run("w5b-" + target, target, ops);
        Stats all = r.merged(0, threads);
        double jain = jain(r.perThread());
        System.out.printf(Locale.ROOT,
                "  %-13s W5b %,.0f acquisitions/s, p50 %.2f ms p99 %.2f ms max %.2f ms, not granted %d, max holders %d of %d, violations %d, Jain %.4f (%s), server CPU %.0f %%%n",
                target, all.grants / r.seconds(), ms(all.acquire, 50), ms(all.acquire, 99), all.acquire.getMaxValue() / 1e6,
                all.notGranted, w.maxHolders.get(), permits, w.violations.get(), jain, minMax(r.perThread()),
                r.serverCpu() / r.seconds() * 100);
        put("W5b", "acquisitions/s (" + threads + " threads, " + permits + " permits)", target, f0(all.grants / r.seconds()));
        put("W5b", "acquire p50 / p99 / max (ms)", target,
                f2(ms(all.acquire, 50)) + " / " + f2(ms(all.acquire, 99)) + " / " + f2(all.acquire.getMaxValue() / 1e6));
        put("W5b", "acquires not granted within the 10 s wait", target, Long.toString(all.notGranted));
        put("W5b", "most holders inside at once (must be ≤ " + permits + ")", target, Integer.toString(w.maxHolders.get()));
        put("W5b", "violations (more than " + permits + " inside)", target, Long.toString(w.violations.get()));
        put("W5b", "Jain's index (grants per thread min..max)", target, String.format(Locale.ROOT, "%.4f (%s)", jain, minMax(r.perThread())));
        put("W5b", "server CPU · load-generator CPU (% of one core)", target,
                f0(r.serverCpu() / r.seconds() * 100) + " · " + f0(r.clientCpu() / r.seconds() * 100));
    }

    // ----------------------------------------------------------------- output

    final SharedReport report = new SharedReport();

    void put(String table, String measure, String target, String value) {
        report.put(table, measure, target, value);
    }

    public static void main(String[] args) throws Exception {
        SharedBench b = new SharedBench();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println(usage());
                System.exit(2);
            }
            b.opts.put(args[i].substring(2), args[++i]);
        }
        String loadBefore = Proc.loadAverage();
        System.out.println("load average before: " + loadBefore);
        String run = Long.toString(System.currentTimeMillis(), 36); // fresh keys: nothing left from another run
        List<String> aTargets = List.of(b.opt("w5a-targets", "client,redisson").split(","));
        List<String> bTargets = List.of(b.opt("w5b-targets", "client,redisson-pes,redisson-sem").split(","));
        List<String> workloads = List.of(b.opt("workloads", "w5a,w5b").split(","));
        System.out.printf(Locale.ROOT, "W5: %s s measured after %s s warm-up per target; hold %s µs busy; wait %d s, lease %d s%n",
                b.opt("duration", "20"), b.opt("warmup", "3"), b.opt("hold-micros", "50"), WAIT_SECONDS, LEASE_SECONDS);
        try {
            if (workloads.contains("w5a")) {
                for (String t : aTargets) {
                    System.out.println("w5a " + t + " ... (load " + Proc.loadAverage() + ")");
                    b.w5a(t, "w5a/" + run + "/" + t);
                }
            }
            if (workloads.contains("w5b")) {
                for (String t : bTargets) {
                    System.out.println("w5b " + t + " ... (load " + Proc.loadAverage() + ")");
                    b.w5b(t, "w5b/" + run + "/" + t);
                }
            }
        } finally {
            for (Object c : b.shared.values()) {
                if (c instanceof RedissonClient r) {
                    r.shutdown();
                } else if (c instanceof AutoCloseable a) {
                    a.close();
                }
            }
        }
        String loadAfter = Proc.loadAverage();
        System.out.println("load average after: " + loadAfter);
        StringBuilder out = new StringBuilder();
        if (workloads.contains("w5a")) {
            out.append(b.report.table("W5a", aTargets)).append('\n');
        }
        if (workloads.contains("w5b")) {
            out.append(b.report.table("W5b", bTargets)).append('\n');
        }
        out.append("load average (1/5/15 min) before: ").append(loadBefore).append(", after: ").append(loadAfter).append('\n');
        System.out.println();
        System.out.println(out);
        String file = b.opt("out", null);
        if (file != null) {
            Files.writeString(Path.of(file), out);
        }
    }
}
