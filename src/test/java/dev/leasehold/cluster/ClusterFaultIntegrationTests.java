package dev.leasehold.cluster;

import static dev.leasehold.cluster.ClusterWire.acquire;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.ServerProcess;

/**
 * Three real server processes (PROTOCOL.md section 10) under lock traffic from several client
 * threads on a few shared keys, while the leader is killed ({@code kill -9}), paused
 * ({@code SIGSTOP} for longer than the election timeout, then {@code SIGCONT}: it must not grant
 * after it wakes) and followers restart. The checker: no two valid tickets of a key overlap
 * (validity as a client computes it, 9.6, ended early by the holder's Release), tokens are unique
 * and grow per key and across every failover, every Acquire got exactly one outcome with its own
 * owner. It also measures failover: from the fault to the first {@code A} on a fresh session.
 *
 * <p>CI runs one round of each fault. {@code -Dleasehold.cluster.failovers=100} runs 100 leader
 * faults, cycling through {@code -Dleasehold.cluster.faults} (default
 * {@code kill9,restart,stop,term}; {@code kill9} alone measures crash failover). Seeded:
 * {@code -Dleasehold.seed=N}. Extra node settings: {@code -Dleasehold.cluster.node-props=k=v;k=v}.
 */
@FaultRun
class ClusterFaultIntegrationTests {

    /** Leader faults to run (kill9, stop and term rounds; follower restarts do not count). */
    private static final int FAILOVERS = Integer.getInteger("leasehold.cluster.failovers", 3);
    /**
     * The faults, cycled round by round: {@code kill9} (leader {@code kill -9}), {@code stop}
     * (leader {@code SIGSTOP}, then {@code SIGCONT}), {@code term} (leader SIGTERM: the drain
     * hands leadership over), {@code restart} (a follower killed and restarted).
     */
    private static final List<String> FAULTS = List.of(
            System.getProperty("leasehold.cluster.faults", "kill9,restart,stop,term").split(","));
    private static final long SEED = Long.getLong("leasehold.seed", System.nanoTime());
    private static final long ELECTION_MAX_MS = 2000;
    /** Ratis's log level in the nodes ({@code -Dleasehold.cluster.ratis-log=INFO} shows elections). */
    private static final String RATIS_LOG = System.getProperty("leasehold.cluster.ratis-log", "WARN");
    /** If set, every node process's output is copied there (one file per process) at the end. */
    private static final String KEEP_LOGS = System.getProperty("leasehold.cluster.logs");
    private static final List<String> KEYS = List.of("k0", "k1", "k2", "k3", "k4", "k5");

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;

    private final ClusterHistory history = new ClusterHistory();
    /** Owners of the failover probes (fresh sessions, so any unique number will do). */
    private final AtomicLong probeOwner = new AtomicLong(1L << 40);

    @Test
    void noOverlapNoLostTokenAndBoundedFailoverUnderCrashPauseAndRestart() throws Exception {
        System.out.println("ClusterFaultIntegrationTests seed " + SEED + ", failovers " + FAILOVERS);
        cluster = new ThreeNodeProcesses(dir);
        ClusterLoad load = null;
        try {
            for (int i = 0; i < 3; i++) {
                cluster.launch(i, nodeProps(i));
            }
            for (int i = 0; i < 3; i++) {
                awaitLog(i, "Leasehold protocol listening", 120_000);
            }
            long t = System.nanoTime();
            firstGrant(60_000);
            System.out.printf("cluster up, first grant %d ms after the last node listened%n", ms(System.nanoTime() - t));

            load = new ClusterLoad(ClusterWire.loopback(cluster.clientPorts), history, 1);
            load.start(6, SEED);
            awaitMoreGrants(50, 60_000); // real traffic before the first fault
            cluster.awaitEveryMemberStored(120_000); // a late founder must hold the log before a leader dies

            List<Long> failoverMs = new ArrayList<>();
            Map<String, List<Long>> byFault = new HashMap<>();
            int leaderFaults = 0;
            int round = 0;
            while (leaderFaults < FAILOVERS) {
                long maxTokenBefore = history.maxToken();
                String fault = FAULTS.get(round % FAULTS.size());
                long took = -1;
                switch (fault) {
                    case "restart" -> {
                        int f = (leader(load, 10_000) + 1) % 3;
                        cluster.nodes[f].kill9();
                        restart(f);
                        awaitLog(f, "leader is now", 120_000);
                    }
                    case "kill9" -> {
                        int l = leader(load, 30_000);
                        long t0 = System.nanoTime();
                        cluster.nodes[l].kill9();
                        took = ms(firstGrant(30_000) - t0);
                        restart(l);
                        awaitLog(l, "leader is now", 120_000);
                    }
                    case "stop" -> {
                        int l = leader(load, 30_000);
                        long t0 = System.nanoTime();
                        cluster.nodes[l].signal("STOP");
                        took = ms(firstGrant(30_000) - t0);
                        // Paused for longer than the election timeout (real time must pass for the
                        // others to elect), then woken: it must find the new leader and grant nothing.
                        long pausedMs = ms(System.nanoTime() - t0);
                        if (pausedMs < ELECTION_MAX_MS + 1500) {
                            Thread.sleep(ELECTION_MAX_MS + 1500 - pausedMs);
                        }
                        cluster.nodes[l].signal("CONT");
                    }
                    case "term" -> {
                        // What Kubernetes does on a rolling update: the drain hands leadership over.
                        int l = leader(load, 30_000);
                        long t0 = System.nanoTime();
                        cluster.nodes[l].signal("TERM");
                        took = ms(firstGrant(30_000) - t0);
                        assertThat(cluster.nodes[l].awaitExit(30_000)).as("a drained node exits").isNotNull();
                        restart(l);
                        awaitLog(l, "leader is now", 120_000);
                    }
                    default -> throw new IllegalArgumentException("unknown fault " + fault + " (kill9, stop, term, restart)");
                }
                if (!fault.equals("restart")) {
                    leaderFaults++;
                }
                if (took >= 0) {
                    failoverMs.add(took);
                    byFault.computeIfAbsent(fault, k -> new ArrayList<>()).add(took);
                }
                awaitMoreGrants(20, 30_000); // traffic on the new configuration before the tokens are compared
                long maxTokenAfter = history.maxToken();
                if (took >= 0) {
                    assertThat(maxTokenAfter).as("tokens grow across the failover (%s)", fault)
                            .isGreaterThan(maxTokenBefore);
                }
                System.out.printf("round %d: %s%s%n", round, fault, took >= 0 ? ", first grant after " + took + " ms" : "");
                round++;
            }
            load.stop();
            List<String> violations = history.check();
            assertThat(violations).as("violations (seed %d)", SEED).isEmpty();
            assertThat(history.tickets()).as("the load got grants").isPositive();
            Collections.sort(failoverMs);
            System.out.printf("failover (fault → first A on a fresh session), %d rounds: min %d, p50 %d, p99 %d, max %d ms; by fault %s%n",
                    failoverMs.size(), failoverMs.get(0), failoverMs.get(failoverMs.size() / 2),
                    failoverMs.get((int) Math.ceil(failoverMs.size() * 0.99) - 1), failoverMs.get(failoverMs.size() - 1),
                    byFault);
            System.out.printf("acquires sent %d, outcomes %s, tickets %d%n", history.sentCount(), history.outcomeCounts(),
                    history.tickets());
            // The target (p99 <= 3.5 s, never over 5 s) is measured and reported, not asserted: on
            // 2 cores shared with other JVMs single rounds took up to 19.6 s (docs/cluster.md).
            // This bound only says that the cluster recovered at all.
            assertThat(failoverMs.get(failoverMs.size() - 1)).as("the cluster recovered from every fault")
                    .isLessThan(60_000);
        } finally {
            if (load != null) {
                load.stop();
            }
            for (int i = 0; i < 3; i++) {
                if (cluster.nodes[i] != null) {
                    try {
                        cluster.nodes[i].signal("CONT");
                    } catch (IOException | InterruptedException ignored) {
                        // already gone
                    }
                    retire(i);
                }
            }
        }
    }

    /** Replaces node i (already killed) by a new process on the same data dir and ports. */
    private void restart(int i) throws IOException {
        retire(i);
        cluster.launch(i, nodeProps(i));
    }

    /** Stops node i's process if still alive, keeps its output if asked to, removes its temp log. */
    private void retire(int i) throws IOException {
        ServerProcess p = cluster.nodes[i];
        if (KEEP_LOGS != null) {
            Path keep = Path.of(KEEP_LOGS);
            java.nio.file.Files.createDirectories(keep);
            java.nio.file.Files.writeString(keep.resolve(cluster.ids[i] + "-pid" + p.pid() + ".log"), p.output());
        }
        p.close();
    }

    private Map<String, String> nodeProps(int i) {
        Map<String, String> extra = new java.util.LinkedHashMap<>();
        for (String kv : System.getProperty("leasehold.cluster.node-props", "").split(";")) {
            if (!kv.isBlank()) {
                extra.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            }
        }
        return cluster.props(i, RATIS_LOG, extra);
    }

    /**
     * Probes every node on fresh sessions, in parallel, until one grants; returns when (nanoTime).
     * One probe thread per node, so a paused node (whose kernel still accepts connections) or a
     * slow commit on a loaded machine delays only its own probe: the measured failover is the
     * cluster's, not the prober's.
     */
    private long firstGrant(long timeoutMs) throws Exception {
        java.util.concurrent.CompletableFuture<Long> granted = new java.util.concurrent.CompletableFuture<>();
        List<Thread> probes = new ArrayList<>();
        List<Conn> open = Collections.synchronizedList(new ArrayList<>());
        Map<String, String> lastSeen = new java.util.concurrent.ConcurrentSkipListMap<>(); // for the failure message
        for (int i = 0; i < 3; i++) {
            int node = i;
            Thread t = new Thread(() -> {
                while (!granted.isDone()) {
                    try (Conn c = new Conn(cluster.clientPorts[node])) {
                        open.add(c);
                        long owner = probeOwner.getAndIncrement();
                        c.send(acquire(0, 1, owner, "failover-probe-" + owner));
                        Answer a = c.read(5000);
                        if (a.op() == 'A') {
                            long seen = System.nanoTime();
                            history.granted(node, seen, a.token());
                            granted.complete(seen);
                        }
                        lastSeen.put(cluster.ids[node], "answered " + a);
                    } catch (IOException e) {
                        lastSeen.put(cluster.ids[node], e.toString()); // down, paused, not yet serving, or closed because another probe won
                    }
                    try {
                        Thread.sleep(20); // between attempts on a node that refused or said X 8
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "failover-probe-" + cluster.ids[i]);
            t.setDaemon(true);
            t.start();
            probes.add(t);
        }
        try {
            return granted.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("gave up after " + timeoutMs + " ms waiting for a node to grant a failover probe; last seen: "
                    + lastSeen);
        } finally {
            granted.complete(-1L);
            synchronized (open) {
                open.forEach(Conn::close);
            }
            for (Thread t : probes) {
                t.interrupt();
                t.join(10_000);
            }
        }
    }

    /** Waits until the load threads have seen {@code n} more grants. */
    private void awaitMoreGrants(int n, long timeoutMs) throws InterruptedException {
        assertThat(history.awaitMoreGrants(n, timeoutMs)).as("%d more grants in %d ms; outcomes %s", n, timeoutMs,
                history.outcomeCounts()).isTrue();
    }

    /** The node that grants now. */
    private static int leader(ClusterLoad load, long timeoutMs) throws InterruptedException {
        int l = load.leader(timeoutMs);
        assertThat(l).as("a leader within %d ms (%s)", timeoutMs, load.lastProbe()).isNotNegative();
        return l;
    }

    private void awaitLog(int i, String text, long timeoutMs) throws Exception {
        cluster.awaitLog(i, text, timeoutMs);
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
