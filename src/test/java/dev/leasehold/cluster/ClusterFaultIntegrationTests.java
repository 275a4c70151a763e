package dev.leasehold.cluster;

import static dev.leasehold.cluster.ClusterWire.acquire;
import static dev.leasehold.cluster.ClusterWire.release;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;

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

    private final String[] ids = {"n1", "n2", "n3"};
    private final int[] clientPorts = new int[3];
    private final int[] raftPorts = new int[3];
    private final ServerProcess[] nodes = new ServerProcess[3];

    private final ConcurrentLinkedQueue<Ticket> tickets = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong grants = new AtomicLong();
    private final AtomicLong outcomes = new AtomicLong();
    private final Map<String, AtomicLong> outcomeCounts = Collections.synchronizedMap(new HashMap<>());
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong nextOwner = new AtomicLong(1);

    record Ticket(String key, long token, long grantSeenNanos, long validEndNanos) {
    }

    @Test
    void noOverlapNoLostTokenAndBoundedFailoverUnderCrashPauseAndRestart() throws Exception {
        System.out.println("ClusterFaultIntegrationTests seed " + SEED + ", failovers " + FAILOVERS);
        for (int i = 0; i < 3; i++) {
            clientPorts[i] = Ports.free();
            raftPorts[i] = Ports.free();
        }
        List<Thread> workers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                nodes[i] = ServerProcess.launch(dir.resolve(ids[i]), nodeProps(i));
            }
            for (int i = 0; i < 3; i++) {
                awaitLog(i, "Leasehold protocol listening", 120_000);
            }
            long t = System.nanoTime();
            firstGrant(60_000);
            System.out.printf("cluster up, first grant %d ms after the last node listened%n", ms(System.nanoTime() - t));

            for (int w = 0; w < 6; w++) {
                Random random = new Random(SEED + w);
                Thread th = new Thread(() -> work(random), "load-" + w);
                th.setDaemon(true);
                th.start();
                workers.add(th);
            }
            awaitMoreGrants(50, 60_000); // real traffic before the first fault

            List<Long> failoverMs = new ArrayList<>();
            Map<String, List<Long>> byFault = new HashMap<>();
            int leaderFaults = 0;
            int round = 0;
            while (leaderFaults < FAILOVERS) {
                long maxTokenBefore = maxToken();
                String fault = FAULTS.get(round % FAULTS.size());
                long took = -1;
                switch (fault) {
                    case "restart" -> {
                        int f = (leaderIndex(10_000) + 1) % 3;
                        nodes[f].kill9();
                        restart(f);
                        awaitLog(f, "leader is now", 120_000);
                    }
                    case "kill9" -> {
                        int l = leaderIndex(30_000);
                        long t0 = System.nanoTime();
                        nodes[l].kill9();
                        took = ms(firstGrant(30_000) - t0);
                        restart(l);
                        awaitLog(l, "leader is now", 120_000);
                    }
                    case "stop" -> {
                        int l = leaderIndex(30_000);
                        long t0 = System.nanoTime();
                        nodes[l].signal("STOP");
                        took = ms(firstGrant(30_000) - t0);
                        // Paused for longer than the election timeout (real time must pass for the
                        // others to elect), then woken: it must find the new leader and grant nothing.
                        long pausedMs = ms(System.nanoTime() - t0);
                        if (pausedMs < ELECTION_MAX_MS + 1500) {
                            Thread.sleep(ELECTION_MAX_MS + 1500 - pausedMs);
                        }
                        nodes[l].signal("CONT");
                    }
                    case "term" -> {
                        // What Kubernetes does on a rolling update: the drain hands leadership over.
                        int l = leaderIndex(30_000);
                        long t0 = System.nanoTime();
                        nodes[l].signal("TERM");
                        took = ms(firstGrant(30_000) - t0);
                        assertThat(nodes[l].awaitExit(30_000)).as("a drained node exits").isNotNull();
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
                long maxTokenAfter = maxToken();
                if (took >= 0) {
                    assertThat(maxTokenAfter).as("tokens grow across the failover (%s)", fault)
                            .isGreaterThan(maxTokenBefore);
                }
                System.out.printf("round %d: %s%s%n", round, fault, took >= 0 ? ", first grant after " + took + " ms" : "");
                round++;
            }
            stop.set(true);
            for (Thread th : workers) {
                th.join(15_000);
            }
            check();
            Collections.sort(failoverMs);
            System.out.printf("failover (fault → first A on a fresh session), %d rounds: min %d, p50 %d, p99 %d, max %d ms; by fault %s%n",
                    failoverMs.size(), failoverMs.get(0), failoverMs.get(failoverMs.size() / 2),
                    failoverMs.get((int) Math.ceil(failoverMs.size() * 0.99) - 1), failoverMs.get(failoverMs.size() - 1),
                    byFault);
            System.out.printf("acquires sent %d, outcomes %s, tickets %d%n", sent.get(), outcomeCounts, tickets.size());
            // The target (p99 <= 3.5 s, never over 5 s) is measured and reported, not asserted: on
            // 2 cores shared with other JVMs single rounds took up to 19.6 s (docs/cluster.md).
            // This bound only says that the cluster recovered at all.
            assertThat(failoverMs.get(failoverMs.size() - 1)).as("the cluster recovered from every fault")
                    .isLessThan(60_000);
        } finally {
            stop.set(true);
            for (int i = 0; i < 3; i++) {
                if (nodes[i] != null) {
                    try {
                        nodes[i].signal("CONT");
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
        nodes[i] = ServerProcess.launch(dir.resolve(ids[i]), nodeProps(i));
    }

    /** Stops node i's process if still alive, keeps its output if asked to, removes its temp log. */
    private void retire(int i) throws IOException {
        ServerProcess p = nodes[i];
        if (KEEP_LOGS != null) {
            Path keep = Path.of(KEEP_LOGS);
            java.nio.file.Files.createDirectories(keep);
            java.nio.file.Files.writeString(keep.resolve(ids[i] + "-pid" + p.pid() + ".log"), p.output());
        }
        p.close();
    }

    private Map<String, String> nodeProps(int i) {
        Map<String, String> p = ServerProcess.props("leasehold.port", String.valueOf(clientPorts[i]),
                "leasehold.cluster.node-id", ids[i], "logging.level.org.apache.ratis", RATIS_LOG);
        for (String kv : System.getProperty("leasehold.cluster.node-props", "").split(";")) {
            if (!kv.isBlank()) {
                p.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            }
        }
        for (int j = 0; j < 3; j++) {
            p.put("leasehold.cluster.peers." + ids[j] + ".raft-address", "127.0.0.1:" + raftPorts[j]);
            p.put("leasehold.cluster.peers." + ids[j] + ".client-address", "127.0.0.1:" + clientPorts[j]);
        }
        return p;
    }

    // ------------------------------------------------------------------ the checker

    private void check() {
        assertThat(violations).as("protocol violations seen by the clients").isEmpty();
        assertThat(outcomes.get()).as("every Acquire sent got exactly one outcome").isEqualTo(sent.get());
        Map<String, List<Ticket>> byKey = new HashMap<>();
        Map<Long, Ticket> byToken = new HashMap<>();
        for (Ticket t : tickets) {
            assertThat(byToken.put(t.token(), t)).as("token %d issued twice", t.token()).isNull();
            byKey.computeIfAbsent(t.key(), k -> new ArrayList<>()).add(t);
        }
        for (List<Ticket> list : byKey.values()) {
            list.sort((a, b) -> Long.compare(a.grantSeenNanos(), b.grantSeenNanos()));
            for (int i = 1; i < list.size(); i++) {
                Ticket prev = list.get(i - 1);
                Ticket next = list.get(i);
                assertThat(next.token()).as("tokens of key %s grow", next.key()).isGreaterThan(prev.token());
                assertThat(next.grantSeenNanos()).as("ticket %s valid before %s stopped being valid", next, prev)
                        .isGreaterThanOrEqualTo(prev.validEndNanos());
            }
        }
        assertThat(tickets).as("the load got grants").isNotEmpty();
    }

    private long maxToken() {
        long max = 0;
        for (Ticket t : tickets) {
            max = Math.max(max, t.token());
        }
        return max;
    }

    // ------------------------------------------------------------------ the load

    /**
     * One client: acquire a random shared key (wait 0 or 1 s, lease 1–2 s), hold it a little,
     * release. Follows {@code X 8} hints; {@code X 9}, a broken session or no answer in time make
     * the Acquire Indeterminate (9.9), and the next one goes to a fresh session.
     */
    private void work(Random random) {
        Conn conn = null;
        while (!stop.get()) {
            try {
                if (conn == null) {
                    conn = connectToLeader(random, 5_000);
                    if (conn == null) {
                        continue;
                    }
                }
                String key = KEYS.get(random.nextInt(KEYS.size()));
                int wait = random.nextInt(2);
                int lease = 1 + random.nextInt(2);
                long owner = nextOwner.getAndIncrement();
                sent.incrementAndGet();
                long sendStart = System.nanoTime();
                Answer a;
                try {
                    conn.send(acquire(wait, lease, owner, key));
                    a = conn.read(wait * 1000 + 3000);
                } catch (IOException e) {
                    outcome("indeterminate");
                    conn.close();
                    conn = null;
                    continue;
                }
                long seen = System.nanoTime();
                if (a.op() == 'X') {
                    // 8: nothing executed (a resend would be allowed); 9: Indeterminate.
                    outcome(a.code() == 8 ? "not-leader" : "indeterminate");
                    conn.close();
                    conn = null;
                    continue;
                }
                if (a.number() != owner) {
                    violations.add("answer " + (char) a.op() + " for owner " + a.number() + ", expected " + owner);
                    outcome("wrong");
                    continue;
                }
                if (a.op() != 'A') {
                    outcome(a.op() == 'T' ? "timed-out" : "busy");
                    continue;
                }
                outcome("acquired");
                long margin = Math.max(TimeUnit.MILLISECONDS.toNanos(50), (a.queuedMs() + lease * 1000L) * 10_000L);
                long validUntil = sendStart + TimeUnit.MILLISECONDS.toNanos(a.queuedMs() + lease * 1000L) - margin;
                if (seen >= validUntil) {
                    continue; // the delivery gate (9.7): never valid for us
                }
                long hold = TimeUnit.MILLISECONDS.toNanos(random.nextInt(200));
                long releaseAt = Math.min(seen + hold, validUntil);
                long sleep = releaseAt - System.nanoTime();
                if (sleep > 0) {
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(sleep), (int) (sleep % 1_000_000)); // the holder works for its random hold: real time
                }
                long end = Math.min(validUntil, System.nanoTime()); // stop acting as holder, then release
                tickets.add(new Ticket(key, a.token(), seen, end));
                grants.incrementAndGet();
                try {
                    conn.send(release(a.token(), key));
                    Answer r = conn.read(3000);
                    if (r.op() == 'X') {
                        conn.close();
                        conn = null;
                    }
                } catch (IOException e) {
                    conn.close();
                    conn = null; // the lease frees the key
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                violations.add(e.toString());
            }
        }
        if (conn != null) {
            conn.close();
        }
    }

    private void outcome(String what) {
        outcomes.incrementAndGet();
        outcomeCounts.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    /** A session to the node that grants: follow {@code X 8} hints, else try the next node. */
    private Conn connectToLeader(Random random, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int i = random.nextInt(3);
        long backoff = 50;
        while (System.nanoTime() < deadline && !stop.get()) {
            int port = clientPorts[i];
            try {
                Conn c = new Conn(port);
                // A Ping cannot tell the leader; an Acquire on a private key can, and is released.
                long owner = nextOwner.getAndIncrement();
                String probe = "probe-" + owner;
                c.send(acquire(0, 1, owner, probe));
                Answer a = c.read(1500);
                if (a.op() == 'A') {
                    c.send(release(a.token(), probe));
                    Answer r = c.read(3000);
                    if (r.op() == 'R') {
                        return c;
                    }
                }
                c.close();
                if (a.op() == 'X' && a.message().startsWith("leader=")) {
                    int hinted = portIndex(Integer.parseInt(a.message().substring(a.message().lastIndexOf(':') + 1)));
                    if (hinted >= 0 && hinted != i) {
                        i = hinted;
                        continue;
                    }
                }
            } catch (IOException e) {
                // down or paused: next node
            }
            i = (i + 1) % 3;
            Thread.sleep(backoff); // back off before the next node: an election takes real time
            backoff = Math.min(500, backoff * 2);
        }
        return null;
    }

    private int portIndex(int port) {
        for (int j = 0; j < 3; j++) {
            if (clientPorts[j] == port) {
                return j;
            }
        }
        return -1;
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
        for (int i = 0; i < 3; i++) {
            int node = i;
            Thread t = new Thread(() -> {
                while (!granted.isDone()) {
                    try (Conn c = new Conn(clientPorts[node])) {
                        open.add(c);
                        long owner = nextOwner.getAndIncrement();
                        c.send(acquire(0, 1, owner, "failover-probe-" + owner));
                        if (c.read(5000).op() == 'A') {
                            granted.complete(System.nanoTime());
                        }
                    } catch (IOException e) {
                        // down, paused, not yet serving, or closed because another probe won
                    }
                    try {
                        Thread.sleep(20); // between attempts on a node that refused or said X 8
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "failover-probe-" + ids[i]);
            t.setDaemon(true);
            t.start();
            probes.add(t);
        }
        try {
            return granted.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no node granted within " + timeoutMs + " ms");
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

    /** Waits until the load threads have seen {@code n} more grants (they record every one). */
    private void awaitMoreGrants(int n, long timeoutMs) throws InterruptedException {
        long target = grants.get() + n;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (grants.get() < target) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("only " + (n - (target - grants.get())) + " of " + n + " grants in " + timeoutMs
                        + " ms; outcomes " + outcomeCounts);
            }
            Thread.sleep(10); // polling a counter the load threads move
        }
    }

    /** The node that grants now. */
    private int leaderIndex(long timeoutMs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < 3; i++) {
                try (Conn c = new Conn(clientPorts[i])) {
                    long owner = nextOwner.getAndIncrement();
                    c.send(acquire(0, 1, owner, "leader-probe-" + owner));
                    if (c.read(1000).op() == 'A') {
                        return i;
                    }
                } catch (IOException e) {
                    // next
                }
            }
            Thread.sleep(50); // no node grants yet: an election takes real time, poll again
        }
        throw new AssertionError("no leader within " + timeoutMs + " ms");
    }

    private void awaitLog(int i, String text, long timeoutMs) throws Exception {
        nodes[i].awaitOutput(ids[i], text, timeoutMs);
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
