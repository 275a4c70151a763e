package dev.leasehold.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.cluster.ClusterSettings;

/**
 * A real Leasehold cluster in this JVM for failover tests: three (or another odd number of)
 * nodes with real Raft (Ratis over loopback gRPC), each on its own free port and data directory,
 * wired as the server wires a cluster node. Election timeouts are short (500-1000 ms), so a new
 * leader serves within a few seconds of {@link #killLeader()}.
 *
 * <pre>{@code
 * try (TestingCluster cluster = TestingCluster.start()) {
 *     LeaseholdClient client = cluster.client();        // knows every node
 *     ... take a lock ...
 *     cluster.killLeader();                              // the client's session ends: its leases are lost
 *     cluster.awaitLeader();
 *     ... the application takes the lock again ...
 * }
 * }</pre>
 *
 * <p>Node indexes run from 0. Not thread-safe: one test thread drives it.
 */
public final class TestingCluster implements AutoCloseable {

    /** How long {@link #awaitLeader()} waits for a node to serve. */
    private static final Duration LEADER_WAIT = Duration.ofSeconds(30);

    private final Path dir;
    private final ClusterSettings[] settings;
    private final int[] clientPorts;
    private final EmbeddedNode[] nodes;
    private final AtomicBoolean fatal = new AtomicBoolean();
    private final List<LeaseholdClient> clients = new ArrayList<>();

    private TestingCluster(Path dir, int size, Duration electionMin, Duration electionMax) {
        this.dir = dir;
        this.clientPorts = new int[size];
        this.settings = new ClusterSettings[size];
        this.nodes = new EmbeddedNode[size];
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
            clientPorts[i] = FreePorts.next();
            peers.put(id(i), new ClusterSettings.Peer("127.0.0.1:" + FreePorts.next(), "127.0.0.1:" + clientPorts[i]));
        }
        for (int i = 0; i < size; i++) {
            // The server's defaults, but for the election timeouts: a test wants its failover fast.
            ClusterSettings d = ClusterSettings.defaults(id(i), peers, dir.resolve(id(i)).resolve("raft"));
            settings[i] = new ClusterSettings(d.nodeId(), d.peers(), d.raftDir(), electionMin, electionMax,
                    d.maxBatch(), d.maxInFlight(), d.maxPending(), d.snapshotEvery(), d.initialToken());
        }
    }

    /** Starts three nodes and waits until one serves as leader and the others follow it. */
    public static TestingCluster start() {
        return start(3);
    }

    /** Starts {@code size} nodes (1, 3 or 5) and waits until one serves as leader and the others follow it. */
    public static TestingCluster start(int size) {
        if (size < 1 || size % 2 == 0 || size > 7) {
            throw new IllegalArgumentException("a TestingCluster has an odd number of nodes from 1 to 7, not " + size);
        }
        TestingCluster cluster = new TestingCluster(TempFiles.newDirectory("leasehold-test-cluster"), size,
                Duration.ofMillis(500), Duration.ofMillis(1000));
        try {
            cluster.startAll();
            cluster.awaitAllReady();
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /**
     * Starts every node at once: a node's start (Ratis, gRPC) takes a while, and founders that
     * start together see each other empty at their first formation probe, so they form at once.
     */
    private void startAll() {
        List<Thread> starters = new ArrayList<>();
        RuntimeException[] failure = new RuntimeException[1];
        for (int i = 0; i < nodes.length; i++) {
            int node = i;
            Thread t = new Thread(() -> {
                try {
                    startNode(node);
                } catch (RuntimeException e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            }, "leasehold-test-start-" + id(i));
            t.start();
            starters.add(t);
        }
        for (Thread t : starters) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting the TestingCluster", e);
            }
        }
        synchronized (failure) {
            if (failure[0] != null) {
                throw failure[0];
            }
        }
    }

    private static String id(int i) {
        return "n" + i;
    }

    private void startNode(int i) {
        EmbeddedNode n = EmbeddedNode.member(settings[i], clientPorts[i], () -> fatal.set(true));
        n.start();
        nodes[i] = n;
    }

    /** The number of nodes (running or not). */
    public int size() {
        return nodes.length;
    }

    /** Every node's {@code 127.0.0.1:<port>}, comma-separated: what {@code leasehold.client.servers} takes. */
    public String connectString() {
        return String.join(",", addresses());
    }

    /** Every node's {@code 127.0.0.1:<port>}, by node index. */
    public List<String> addresses() {
        return Arrays.stream(clientPorts).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.toList());
    }

    /** The directory holding every node's data ({@code n0/}, {@code n1/}, ...); deleted by {@link #close()}. */
    public Path dataDirectory() {
        return dir;
    }

    /** Node {@code i}'s protocol port. */
    public int port(int i) {
        return clientPorts[i];
    }

    /** A client that knows every node (it finds the leader itself), closed with the cluster. */
    public LeaseholdClient client() {
        LeaseholdClient client = LeaseholdClient.create(addresses().toArray(String[]::new));
        clients.add(client);
        return client;
    }

    /** True while node {@code i} runs. */
    public boolean isRunning(int i) {
        return nodes[i] != null;
    }

    /** The index of the node that serves as leader now, or -1 (an election is under way). */
    public int leader() {
        for (int i = 0; i < nodes.length; i++) {
            if (nodes[i] != null && nodes[i].serving()) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Waits (up to 30 s) until a running node serves as leader and returns its index.
     *
     * @throws IllegalStateException naming what each node reported, if none serves by then
     */
    public int awaitLeader() {
        await("a node serving as leader", () -> leader() >= 0);
        return leader();
    }

    /**
     * Waits (up to 30 s) until a leader serves and every running node is a member that knows it
     * (formed storage, leader known): after this, stopping any one node of three leaves a majority.
     */
    public void awaitAllReady() {
        await("every running node formed and following a serving leader", () -> {
            if (leader() < 0) {
                return false;
            }
            for (EmbeddedNode n : nodes) {
                if (n != null && !n.ready()) {
                    return false;
                }
            }
            return true;
        });
    }

    private void await(String what, java.util.function.BooleanSupplier condition) {
        long start = System.nanoTime();
        long deadline = start + LEADER_WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("TestingCluster: no " + what + " after " + LEADER_WAIT.toSeconds()
                        + " s; nodes: " + describe());
            }
            try {
                Thread.sleep(10); // polling a condition, bounded by the deadline above
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            }
        }
    }

    /**
     * Stops the node that serves as leader (waiting for one first) and returns its index. It
     * stops as a node being shut down does: it hands leadership to a follower, answers its
     * sessions {@code X 9} and closes them, so clients holding leases through it lose them
     * ({@code LossReason}) and their next requests go to the new leader. Follow with
     * {@link #awaitLeader()} to wait for the new one, and {@link #restart(int)} to bring it back.
     */
    public int killLeader() {
        int leader = awaitLeader();
        stop(leader);
        return leader;
    }

    /** Stops node {@code i} (as {@link #killLeader()} describes), keeping its port and data. */
    public void stop(int i) {
        EmbeddedNode n = nodes[i];
        if (n != null) {
            nodes[i] = null;
            n.stop();
        }
    }

    /**
     * Starts node {@code i} again on its port and data directory (stopping it first if it
     * runs) and waits (up to 30 s) until it follows a serving leader again.
     */
    public void restart(int i) {
        stop(i);
        startNode(i);
        awaitAllReady();
    }

    /** True if a node's Raft log failed (a real server would have halted its process). */
    public boolean logFailed() {
        return fatal.get();
    }

    /** Closes its clients, stops every node and deletes the data directories. */
    @Override
    public void close() {
        try {
            clients.forEach(LeaseholdClient::close);
            clients.clear();
            for (int i = 0; i < nodes.length; i++) {
                stop(i);
            }
        } finally {
            TempFiles.deleteTree(dir);
        }
    }

    private String describe() {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < nodes.length; i++) {
            s.append(i == 0 ? "" : "; ").append(id(i)).append(' ')
                    .append(nodes[i] == null ? "stopped" : String.valueOf(nodes[i].status()));
        }
        return s.toString();
    }

    @Override
    public String toString() {
        return "TestingCluster[" + connectString() + "]";
    }
}
