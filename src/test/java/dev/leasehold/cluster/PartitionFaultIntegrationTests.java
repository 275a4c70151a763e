package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.PartitionNet;
import dev.leasehold.testing.Replication;
import dev.leasehold.testing.ServerProcess;

/**
 * Network partitions on three real server processes, each in its own network namespace
 * ({@link PartitionNet}), under lock traffic from this JVM, mixed with {@code kill -9} and
 * {@code SIGSTOP} of the leader. Fault kinds, drawn from a seeded schedule:
 * <ul>
 * <li>{@code leader-cut}: the leader cut from both followers, its clients still reach it (the
 * case that matters most: it must stop granting and send {@code X 9});</li>
 * <li>{@code leader-isolate}: the leader's link down (cut from everybody);</li>
 * <li>{@code re-isolate}: the same, healed, and at once the new leader isolated: the two nodes left
 * must elect and commit over connections that sat in TCP back-off while the first cut lasted
 * (what {@code ClusterNode}'s channel reset on a lost leader is for);</li>
 * <li>{@code follower-cut}: a 2 | 1 split with the leader on the majority side, clients on both;</li>
 * <li>{@code bridge}: the leader and one follower cannot see each other, the other sees both;</li>
 * <li>{@code one-way}: the leader hears the followers, they do not hear it;</li>
 * <li>{@code flap}: the leader cut and healed every 300 ms for 6 s, then healed;</li>
 * <li>{@code kill9} and {@code stop} ({@code SIGSTOP} past the election timeout, then {@code SIGCONT});</li>
 * <li>{@code clock}: n1 is restarted under libfaketime for the round (wall clock only; the monotonic clock is real):
 * its wall clock jumps 5 minutes forward, the leader is killed (a failover across the step), then
 * n1's clock jumps 10 minutes back. Leases run on monotonic clocks and entries carry durations, so
 * the overlap and token rules must hold as before. Without libfaketime this kind is skipped (said
 * in the output).</li>
 * </ul>
 * Checked ({@link ClusterHistory}): no two valid tickets of a key overlap, tokens unique and growing
 * per key and across failovers, one outcome per Acquire, no {@code X 8} on a session a node answered
 * as leader, no grant from a node cut from both peers, and a leader that lost its majority sends
 * {@code X 9} within {@link #X9_BOUND_MS} (the target, one election timeout + 1 s, is counted in the
 * output; the assertion has a margin for 2 noisy CI cores). Measured: the time to that {@code X 9}, and the
 * failover on the majority side (fault → first grant by another node).
 *
 * <p>CI runs a short schedule (each kind once, about 2 minutes). {@code -Dleasehold.faults.long=true}
 * runs {@code -Dleasehold.faults.count} (default 110) faults; {@code -Dleasehold.faults.seed=N}
 * replays a schedule. Skipped, with the reason, where namespaces cannot be made (not root, no
 * {@code ip} or {@code nft}).
 */
@FaultRun
class PartitionFaultIntegrationTests {

    private static final List<String> KINDS = List.of("leader-cut", "leader-isolate", "re-isolate", "follower-cut",
            "bridge", "one-way", "flap", "kill9", "stop", "clock");
    /** libfaketime, for the {@code clock} fault on n1 (Debian package {@code faketime}). */
    private static final Path FAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
    private static final boolean LONG = Boolean.getBoolean("leasehold.faults.long");
    private static final int COUNT = Integer.getInteger("leasehold.faults.count", 110);
    private static final long SEED = Long.getLong("leasehold.faults.seed", System.nanoTime());
    private static final long ELECTION_MAX_MS = 1500;
    /**
     * The asserted bound. The target, "about one election timeout" (PROTOCOL.md 10), is one election
     * timeout + 1 s, and the output counts the rounds over it; the assertion leaves room for a
     * loaded 2-core CI machine (before the node's own majority check, Ratis's step-down alone took
     * up to two election timeouts: 3.0 s was seen in CI).
     */
    private static final long X9_BOUND_MS = 2 * ELECTION_MAX_MS + 1000;
    private static final int PORT = 7420;
    /** If set, the nodes' output is copied there at the end (and of every replaced process). */
    private static final String KEEP_LOGS = System.getProperty("leasehold.faults.logs");
    /** Ratis's log level in the nodes ({@code -Dleasehold.faults.ratis-log=INFO} shows elections). */
    private static final String RATIS_LOG = System.getProperty("leasehold.faults.ratis-log", "WARN");
    private static final int RAFT_PORT = 7430;
    /** The management port, in each node's own namespace (so a fixed number cannot collide). */
    private static final int HTTP_PORT = 7421;

    @TempDir
    Path dir;

    private final String[] ids = {"n1", "n2", "n3"};
    private final ServerProcess[] nodes = new ServerProcess[3];
    private PartitionNet net;
    /** Whether n1 runs under libfaketime now (only during clock rounds). */
    private boolean n1Faked;

    @Test
    void noGrantWithoutMajorityAndX9FromTheCutOffLeader() throws Exception {
        String why = PartitionNet.unavailableReason();
        Assumptions.assumeTrue(why == null, why);
        System.out.println("PartitionFaultIntegrationTests seed " + SEED + (LONG ? ", long schedule" : ", short schedule")
                + " (rerun: -Dleasehold.faults.seed=" + SEED + (LONG ? " -Dleasehold.faults.long=true" : "") + ")");
        Random random = new Random(SEED);
        List<String> kinds = new ArrayList<>(KINDS);
        String only = System.getProperty("leasehold.faults.kinds");
        if (only != null && !only.isBlank()) {
            kinds.retainAll(List.of(only.split(",")));
        }
        if (!Files.isRegularFile(FAKETIME)) {
            kinds.remove("clock");
            System.out.println("PartitionFaultIntegrationTests: no " + FAKETIME + " (apt-get install faketime): "
                    + "the clock fault is skipped");
        }
        List<String> schedule = new ArrayList<>();
        int count = LONG ? COUNT : kinds.size();
        for (int i = 0; i < count; i++) {
            schedule.add(LONG ? kinds.get(random.nextInt(kinds.size())) : kinds.get(i));
        }
        if (!LONG) {
            Collections.shuffle(schedule, random);
        }
        ClusterHistory history = new ClusterHistory();
        Map<String, List<Long>> x9Ms = new LinkedHashMap<>();
        Map<String, List<Long>> failoverMs = new LinkedHashMap<>();
        Map<String, Integer> byKind = new LinkedHashMap<>();
        List<String> late = new ArrayList<>();
        List<String> stalls = new ArrayList<>();
        ClusterLoad load = null;
        try {
            net = PartitionNet.create(3, random);
            List<InetSocketAddress> addrs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                addrs.add(new InetSocketAddress(net.address(i), PORT));
                nodes[i] = launch(i);
            }
            load = new ClusterLoad(addrs, history, 1);
            assertThat(load.leader(300_000)).as("the cluster forms in its namespaces").isNotNegative();
            load.start(5, SEED);
            history.awaitMoreGrants(20, 60_000); // traffic before the first fault (a slow start shows in the rules)

            for (int round = 0; round < schedule.size(); round++) {
                String kind = schedule.get(round);
                if (kind.equals("clock") != n1Faked) {
                    relaunchN1(kind.equals("clock"));
                }
                int l = load.leader(30_000);
                assertThat(l).as("a leader before round %d", round).isNotNegative();
                // Every fault starts on a whole cluster. A node restarted for the last round (or for this
                // clock round) may still be replaying what it missed; killing the leader then left it
                // processing the dead leader's queued appends for seconds, each one renewing that leader
                // for it, so it refused the new candidate's vote (a 65 s stall in the campaign at load 27).
                Replication.awaitEveryNodeApplied(ids, nodes, i -> new Actuator(net.address(i), HTTP_PORT), l,
                        Duration.ofSeconds(120), "before round " + round);
                if (kind.equals("re-isolate")) {
                    l = isolateAndHeal(l, load, history, round, stalls);
                    assertThat(l).as("a leader after the first cut of round %d", round).isNotNegative();
                }
                int a = (l + 1) % 3;
                int b = (l + 2) % 3;
                long maxBefore = history.maxToken();
                long t0 = System.nanoTime();
                boolean leaderLoses = true;
                boolean isolated = false;
                switch (kind) {
                    case "leader-cut" -> {
                        net.cut(l, a, true);
                        net.cut(l, b, true);
                        isolated = true;
                    }
                    case "leader-isolate", "re-isolate" -> {
                        net.link(l, false);
                        isolated = true;
                    }
                    case "follower-cut" -> {
                        net.cut(a, l, true);
                        net.cut(a, b, true);
                        leaderLoses = false;
                    }
                    case "bridge" -> {
                        net.cut(l, a, true);
                        leaderLoses = false;
                    }
                    case "one-way" -> {
                        net.cut(l, a, false);
                        net.cut(l, b, false);
                        isolated = true;
                    }
                    case "flap" -> {
                        for (int f = 0; f < 10; f++) {
                            net.cut(l, a, true);
                            net.cut(l, b, true);
                            Thread.sleep(300); // the flap's period: the fault is real time
                            net.heal();
                            Thread.sleep(300); // the flap's period
                        }
                        leaderLoses = false; // it may or may not: not measured
                    }
                    case "kill9" -> nodes[l].kill9();
                    case "stop" -> nodes[l].signal("STOP");
                    case "clock" -> {
                        setClock("+300"); // n1's wall clock 5 minutes ahead, then a failover
                        nodes[l].kill9();
                    }
                    default -> throw new IllegalArgumentException(kind);
                }
                // The fault is in place only now: each rule is an nft process, and at load average 25
                // applying a cut took over 600 ms. The majority is lost, and the rules start, here.
                long cutDone = System.nanoTime();
                long failover = -1;
                if (leaderLoses) {
                    // 60 s: on 2 cores at load average 20 (other builds) elections took over 30 s (a new
                    // leader lost its majority heartbeats again while starved); an idle machine needs 1-3 s.
                    // A miss is a liveness failure, kept apart from the safety rules so that the
                    // run goes on and the history is still checked.
                    int next = load.leader(60_000, l);
                    failover = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                    if (next < 0) {
                        stalls.add(kind + " of n" + (l + 1) + " in round " + round + ": no grant on the majority side"
                                + " within " + failover + " ms; the nodes' last words:\n" + ServerProcess.lastLogs(ids, nodes, 30));
                        failover = -1;
                    } else {
                        failoverMs.computeIfAbsent(kind, k -> new ArrayList<>()).add(failover);
                    }
                }
                holdPastX9Bound(t0);
                long healAt = System.nanoTime();
                if (isolated) {
                    history.isolated(new ClusterHistory.Isolation(l, cutDone, healAt, kind + " of n" + (l + 1)));
                }
                switch (kind) {
                    case "kill9" -> {
                        keep(l);
                        nodes[l].close();
                        nodes[l] = launch(l);
                    }
                    case "clock" -> {
                        keep(l);
                        nodes[l].close();
                        nodes[l] = l == 0 ? launchFaked(0) : launch(l);
                        setClock("-300"); // and now 5 minutes behind: a 10-minute step back
                    }
                    case "stop" -> nodes[l].signal("CONT");
                    default -> net.heal();
                }
                if (kind.equals("leader-cut") || kind.equals("one-way")) {
                    long x9 = history.firstX9(l, cutDone);
                    long ms = x9 < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(x9 - cutDone);
                    x9Ms.computeIfAbsent(kind, k -> new ArrayList<>()).add(ms);
                    if (ms < 0 || ms > X9_BOUND_MS) {
                        late.add(kind + " of n" + (l + 1) + " in round " + round + ": X 9 after "
                                + (ms < 0 ? "never (within the fault)" : ms + " ms"));
                    }
                }
                if (kind.equals("kill9") || kind.equals("clock")) {
                    // Back in the cluster before the next fault, or that fault could take the
                    // majority (a JVM start took over 60 s here at load average 20).
                    awaitLog(l, "leader is now", 300_000);
                }
                byKind.merge(kind, 1, Integer::sum);
                if (load.leader(120_000) < 0) {
                    stalls.add("no leader within 120 s after " + kind + " in round " + round + ": schedule stopped");
                    break;
                }
                history.awaitMoreGrants(10, 30_000); // traffic on the healed cluster (liveness is judged above)
                String line = String.format("round %d: %s of n%d, failover %s ms, max token %d -> %d", round, kind,
                        l + 1, failover, maxBefore, history.maxToken());
                System.out.println(line);
                if (KEEP_LOGS != null) { // progress outside Surefire's buffer, for long runs
                    Files.createDirectories(Path.of(KEEP_LOGS));
                    Files.writeString(Path.of(KEEP_LOGS, "rounds.txt"), line + " x9 " + x9Ms + " stalls " + stalls.size()
                            + "\n", java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
                }
            }
            load.stop();
            List<String> violations = history.check();
            System.out.printf("PartitionFaultIntegrationTests seed %d: faults %s; grants %d; outcomes %s; violations %d%n",
                    SEED, byKind, history.tickets(), history.outcomeCounts(), violations.size());
            System.out.println("  lost majority -> X 9 (ms) " + x9Ms + " " + percentiles(x9Ms) + "; over the "
                    + (ELECTION_MAX_MS + 1000) + " ms target: " + x9Ms.values().stream().flatMap(List::stream)
                    .filter(ms -> ms > ELECTION_MAX_MS + 1000).count());
            System.out.println("  majority-side failover (ms) " + failoverMs + " " + percentiles(failoverMs));
            violations.forEach(v -> System.out.println("  VIOLATION " + v));
            late.forEach(v -> System.out.println("  LATE " + v));
            stalls.forEach(v -> System.out.println("  STALL " + v));
            assertThat(violations).isEmpty();
            assertThat(stalls).as("the majority side grants again within 60 s of every fault").isEmpty();
            assertThat(late).as("the leader that lost its majority sends X 9 within " + X9_BOUND_MS + " ms")
                    .isEmpty();
        } finally {
            if (load != null) {
                load.stop();
            }
            for (int i = 0; i < 3; i++) {
                ServerProcess p = nodes[i];
                if (p != null && KEEP_LOGS != null) {
                    Files.createDirectories(Path.of(KEEP_LOGS));
                    Files.writeString(Path.of(KEEP_LOGS, ids[i] + "-pid" + p.pid() + ".log"), p.output());
                }
                if (p != null) {
                    try {
                        p.signal("CONT");
                    } catch (IOException | InterruptedException ignored) {
                        // gone
                    }
                    p.close();
                }
            }
            if (net != null) {
                net.close();
            }
        }
    }

    /**
     * The first half of {@code re-isolate}: the leader cut off from everybody until the others have
     * elected and it has noticed, then healed; returns the leader once the healed cluster grants
     * again. What it sets up: while cut, the old leader's appendEntries connections and the others'
     * vote requests to it sat in TCP retransmission and SYN back-off (doubling from 200 ms and 1 s),
     * so right after the heal some connections between the two nodes that must now elect each other
     * are still waiting for their next retransmission. The second cut, of the new leader, then needs
     * exactly those connections.
     */
    private int isolateAndHeal(int l, ClusterLoad load, ClusterHistory history, int round, List<String> stalls)
            throws Exception {
        long t0 = System.nanoTime();
        net.link(l, false);
        long cutDone = System.nanoTime();
        if (load.leader(60_000, l) < 0) {
            stalls.add("re-isolate (first cut) of n" + (l + 1) + " in round " + round + ": no grant on the majority side");
        }
        holdPastX9Bound(t0);
        history.isolated(new ClusterHistory.Isolation(l, cutDone, System.nanoTime(), "re-isolate (first cut) of n" + (l + 1)));
        net.heal();
        history.awaitMoreGrants(10, 30_000);
        return load.leader(30_000);
    }

    /**
     * Holds a fault that began at {@code t0} past the X 9 bound before it is healed: real time must
     * pass for the cut-off leader to notice (its Raft timers run in another process).
     */
    private static void holdPastX9Bound(long t0) throws InterruptedException {
        long held = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        if (held < X9_BOUND_MS + 500) {
            Thread.sleep(X9_BOUND_MS + 500 - held); // real fault time, see above
        }
    }

    private static String percentiles(Map<String, List<Long>> samples) {
        List<Long> all = new ArrayList<>();
        samples.values().forEach(all::addAll);
        all.removeIf(v -> v < 0);
        if (all.isEmpty()) {
            return "(none)";
        }
        Collections.sort(all);
        return String.format("n=%d p50 %d p99 %d max %d", all.size(), all.get(all.size() / 2),
                all.get((int) Math.ceil(all.size() * 0.99) - 1), all.get(all.size() - 1));
    }

    private void awaitLog(int i, String text, long timeoutMs) throws Exception {
        nodes[i].awaitOutput(ids[i], text, timeoutMs);
    }

    private void keep(int i) throws IOException {
        if (KEEP_LOGS != null) {
            Files.createDirectories(Path.of(KEEP_LOGS));
            Files.writeString(Path.of(KEEP_LOGS, ids[i] + "-pid" + nodes[i].pid() + ".log"), nodes[i].output());
        }
    }

    /** n1's wall-clock offset for libfaketime, in seconds ("+300", "-300"); read within 1 s. */
    private void setClock(String offset) throws IOException {
        Files.writeString(dir.resolve("n1-clock"), offset + "\n");
    }

    /**
     * n1 restarted under libfaketime (for a clock round) or without it (for the others). Only the
     * clock rounds run it: with libfaketime's monotonic fix on, the JVM's timed waits spun and n1 used
     * 70% of a core doing nothing (11.5 CPU-minutes in 16 minutes against 43 s for n2). The fix is off
     * now (see {@link #launch(int, boolean)}); the restart stays so that the other faults run on
     * unmodified processes.
     */
    private void relaunchN1(boolean faked) throws Exception {
        keep(0);
        nodes[0].close();
        if (faked) {
            setClock("+0");
        }
        nodes[0] = faked ? launchFaked(0) : launch(0);
        awaitLog(0, "leader is now", 300_000); // back in the cluster before the next fault
    }

    private ServerProcess launchFaked(int i) throws IOException {
        n1Faked = true;
        return launch(i, true);
    }

    private ServerProcess launch(int i) throws IOException {
        if (i == 0) {
            n1Faked = false;
        }
        return launch(i, false);
    }

    private ServerProcess launch(int i, boolean faked) throws IOException {
        Map<String, String> p = ServerProcess.props("leasehold.port", String.valueOf(PORT), "leasehold.address", "0.0.0.0",
                "leasehold.cluster.node-id", ids[i], "logging.level.org.apache.ratis", RATIS_LOG,
                "server.port", String.valueOf(HTTP_PORT), "server.address", "0.0.0.0",
                "management.endpoint.health.show-details", "always");
        for (int j = 0; j < 3; j++) {
            p.put("leasehold.cluster.peers." + ids[j] + ".raft-address", net.address(j) + ":" + RAFT_PORT);
            p.put("leasehold.cluster.peers." + ids[j] + ".client-address", net.address(j) + ":" + PORT);
        }
        Map<String, String> env = Map.of();
        if (faked) {
            Path clock = dir.resolve("n1-clock");
            if (!Files.exists(clock)) {
                setClock("+0");
            }
            // Wall clock only: the monotonic clock (System.nanoTime, Ratis's timers) stays real. And no
            // "monotonic fix": libfaketime 0.9.10 then rewrites the deadline of every wait on a
            // CLOCK_MONOTONIC condition variable, which is how the JVM waits, so every timed wait returned
            // at once and each waiting thread spun (an idle JVM: 5 CPU-seconds in 5.7 s; with the fix off
            // 0.08, and the wall clock still steps). At load 27 the spinning n1 starved itself (JVM pauses
            // of 0.3-1.5 s), and with it the majority it belonged to: a 65 s failover in the campaign.
            env = Map.of("LD_PRELOAD", FAKETIME.toString(), "FAKETIME_TIMESTAMP_FILE", clock.toString(),
                    "FAKETIME_CACHE_DURATION", "1", "FAKETIME_DONT_FAKE_MONOTONIC", "1",
                    "FAKETIME_FORCE_MONOTONIC_FIX", "0");
        }
        return ServerProcess.launch(dir.resolve(ids[i]), p, net.exec(i), env);
    }
}
