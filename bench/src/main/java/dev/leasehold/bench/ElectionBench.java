package dev.leasehold.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

import dev.leasehold.client.Campaign;
import dev.leasehold.client.CampaignListener;
import dev.leasehold.client.ElectionOptions;
import dev.leasehold.client.LeaderListener;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Leadership;
import dev.leasehold.client.Observation;
import dev.leasehold.client.StopReason;

/**
 * Leader election handovers (BENCHMARKS.md "W7: election"): three candidates and an observer,
 * each on a client of its own, on one host's monotonic clock.
 * <ul>
 * <li><b>graceful</b>: the leader resigns ({@code Leadership.resign()}); measured from the call to
 * the next candidate's {@code onStartedLeading}, and to the observer's {@code onNewLeader} for the
 * new term; {@code --rounds} handovers after {@code --warmup} unmeasured ones;</li>
 * <li><b>crash</b> ({@code --crash-rounds N}): candidates in JVMs of their own (this class with
 * {@code --candidate}); the leader's process is killed ({@code kill -9}) and the time to the next
 * {@code onStartedLeading} measured, with {@code --crash-lease} seconds of lease;</li>
 * <li><b>etcd</b> ({@code --etcd URL,...}): the same graceful handovers through etcd's election
 * API (jetcd's {@code Election}: campaign, resign, observe), see {@link EtcdElection}.</li>
 * </ul>
 * Every loop is bounded by its round count, and every wait by a timeout.
 */
final class ElectionBench {

    private static final long WAIT_SECONDS = 30;

    /** A term as a candidate reported it. */
    record Start(int candidate, long term, long nanos, Leadership leadership) {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--candidate")) {
            candidate(args[1], args[2], args[3], Integer.parseInt(args[4]));
            return;
        }
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        String label = a.getOrDefault("label", "leasehold");
        int rounds = Integer.parseInt(a.getOrDefault("rounds", "1000"));
        int warmup = Integer.parseInt(a.getOrDefault("warmup", "100"));
        List<String> rows = new ArrayList<>();
        if (a.containsKey("servers")) {
            if (rounds > 0) {
                rows.add(graceful(label, a.get("servers"), rounds, warmup));
            }
            int crashRounds = Integer.parseInt(a.getOrDefault("crash-rounds", "0"));
            if (crashRounds > 0) {
                rows.add(crash(label, a.get("servers"), crashRounds, Integer.parseInt(a.getOrDefault("crash-lease", "2"))));
            }
        }
        if (a.containsKey("etcd")) {
            rows.add(EtcdElection.graceful(a.getOrDefault("etcd-label", "etcd"), a.get("etcd"), rounds, warmup));
        }
        for (String row : rows) {
            System.out.println(row);
        }
        if (a.containsKey("out")) {
            Path out = Path.of(a.get("out"));
            if (!Files.exists(out)) {
                Files.writeString(out, HEADER + "\n");
            }
            Files.writeString(out, String.join("\n", rows) + "\n", StandardOpenOption.APPEND);
        }
    }

    static final String HEADER = "| target | handover | rounds | to next leader p50 / p99 / max (ms) | observer told p50 / p99 / max (ms) |\n"
            + "|---|---|---:|---|---|";

    static String row(String label, String kind, int rounds, Histogram next, Histogram observed) {
        return String.format("| %s | %s | %d | %s | %s |", label, kind, rounds, ms(next),
                observed == null ? "n/a" : ms(observed));
    }

    static String ms(Histogram h) {
        return String.format("%.2f / %.2f / %.2f", h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6,
                h.getMaxValue() / 1e6);
    }

    static Histogram histogram() {
        return new Histogram(TimeUnit.SECONDS.toNanos(120), 3);
    }

    /** Three candidates and an observer on the Java client; the leader resigns each round. */
    private static String graceful(String label, String servers, int rounds, int warmup) throws Exception {
        String key = "bench-election/" + Long.toString(System.nanoTime() % 1_000_000, 36);
        BlockingQueue<Start> starts = new LinkedBlockingQueue<>();
        Map<Long, Long> observedAt = new ConcurrentHashMap<>();
        List<LeaseholdClient> clients = new ArrayList<>();
        List<Campaign> campaigns = new ArrayList<>();
        try {
            LeaseholdClient watcher = LeaseholdClient.create(servers.split(","));
            clients.add(watcher);
            Observation observation = watcher.election(key, "observer", ElectionOptions.defaults())
                    .observe(new LeaderListener() {
                        @Override
                        public void onNewLeader(long term, String identity) {
                            observedAt.putIfAbsent(term, System.nanoTime());
                        }
                    });
            for (int i = 0; i < 3; i++) {
                LeaseholdClient c = LeaseholdClient.create(servers.split(","));
                clients.add(c);
                int index = i;
                campaigns.add(c.election(key, "candidate-" + i, ElectionOptions.defaults()).campaign(new CampaignListener() {
                    @Override
                    public void onStartedLeading(Leadership l) {
                        starts.add(new Start(index, l.term(), System.nanoTime(), l));
                    }

                    @Override
                    public void onStoppedLeading(Leadership l, StopReason reason) {
                        // the next term is measured from the resign call
                    }
                }));
            }
            Histogram next = histogram();
            Histogram observed = histogram();
            Start current = take(starts);
            for (int r = 0; r < warmup + rounds; r++) {
                long t0 = System.nanoTime();
                current.leadership().resign();
                Start following = take(starts);
                if (following.term() <= current.term()) {
                    throw new IllegalStateException("term " + following.term() + " after " + current.term());
                }
                long seen = awaitObserved(observedAt, following.term());
                if (r >= warmup) {
                    next.recordValue(following.nanos() - t0);
                    observed.recordValue(Math.max(0, seen - t0));
                }
                current = following;
            }
            observation.close();
            return row(label, "graceful (resign)", rounds, next, observed);
        } finally {
            campaigns.forEach(Campaign::close);
            clients.forEach(LeaseholdClient::close);
        }
    }

    private static Start take(BlockingQueue<Start> starts) throws InterruptedException {
        Start s = starts.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (s == null) {
            throw new IllegalStateException("no term started within " + WAIT_SECONDS + " s");
        }
        return s;
    }

    static long awaitObserved(Map<Long, Long> observedAt, long term) throws InterruptedException {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            // The server coalesces a slow watch's unsent events (PROTOCOL.md 6.8): a later term counts too.
            Long at = observedAt.entrySet().stream().filter(e -> e.getKey() >= term).map(Map.Entry::getValue)
                    .min(Long::compare).orElse(null);
            if (at != null) {
                return at;
            }
            if (System.nanoTime() - giveUp > 0) {
                throw new IllegalStateException("the observer was not told of term " + term + " within " + WAIT_SECONDS + " s");
            }
            Thread.sleep(0, 100_000); // the observer's thread records the time; this only looks for it
        }
    }

    /**
     * Candidates in JVMs of their own; each round the leader's process is killed and the time to
     * the next candidate's {@code onStartedLeading} measured (its lease must run out on the server).
     */
    private static String crash(String label, String servers, int rounds, int lease) throws Exception {
        String key = "bench-election-crash/" + Long.toString(System.nanoTime() % 1_000_000, 36);
        BlockingQueue<long[]> starts = new LinkedBlockingQueue<>(); // {candidate, term, nanos}
        List<Process> processes = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                processes.add(spawn(servers, key, i, lease, starts));
            }
            Histogram next = histogram();
            long[] current = takeCrash(starts);
            for (int r = 0; r < rounds; r++) {
                Process leader = processes.get((int) current[0]);
                long t0 = System.nanoTime();
                leader.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                long[] following = takeCrash(starts);
                next.recordValue(following[2] - t0);
                processes.set((int) current[0], spawn(servers, key, (int) current[0], lease, starts));
                current = following;
            }
            return row(label, "crash (kill -9, lease " + lease + " s)", rounds, next, null);
        } finally {
            processes.forEach(Process::destroyForcibly);
        }
    }

    private static long[] takeCrash(BlockingQueue<long[]> starts) throws InterruptedException {
        long[] s = starts.poll(WAIT_SECONDS + 60, TimeUnit.SECONDS);
        if (s == null) {
            throw new IllegalStateException("no term started within " + (WAIT_SECONDS + 60) + " s");
        }
        return s;
    }

    private static Process spawn(String servers, String key, int index, int lease, BlockingQueue<long[]> starts)
            throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC", "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                ElectionBench.class.getName(), "--candidate", servers, key, "candidate-" + index,
                String.valueOf(lease)).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    String[] w = line.split(" ");
                    if (w[0].equals("START")) {
                        starts.add(new long[] {index, Long.parseLong(w[1]), Long.parseLong(w[2])});
                    }
                }
            } catch (Exception e) {
                // the process was killed
            }
        }, "candidate-" + index);
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    /** A candidate process: prints {@code START term nanos} for each term until it is killed. */
    private static void candidate(String servers, String key, String identity, int lease) throws Exception {
        LeaseholdClient c = LeaseholdClient.create(servers.split(","));
        c.election(key, identity, ElectionOptions.defaults().withLeaseSeconds(lease)).campaign(new CampaignListener() {
            @Override
            public void onStartedLeading(Leadership l) {
                System.out.println("START " + l.term() + " " + System.nanoTime());
                System.out.flush();
            }

            @Override
            public void onStoppedLeading(Leadership l, StopReason reason) {
                // killed before it matters
            }
        });
        Thread.sleep(TimeUnit.HOURS.toMillis(1)); // until killed; an hour bounds a forgotten process
    }
}
