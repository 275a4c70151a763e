package dev.leasehold.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

import dev.leasehold.config.ClusterConfiguration;
import dev.leasehold.config.NodeMode;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.RegistryTimer;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

/**
 * A test fixture: a cluster of real nodes in this JVM (real Ratis over loopback gRPC, real
 * protocol ports, one data directory each), wired by the same code as the Spring configuration
 * ({@link ClusterConfiguration.Cluster}, {@link NodeMode#registry}, {@link NodeMode#server}), for
 * tests that need a cluster without starting processes. Each node's advertised
 * {@code client-address} (what followers name in {@code X 8 leader=...} and a leader in
 * {@code X 9}) is given by the test, so a test can put a proxy in front of every node and have the
 * hints route through the proxies it controls. Ports are free loopback ports picked at start.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
public final class InProcessCluster implements AutoCloseable {

    private final Node[] nodes;
    private final boolean[] stopped;
    private final ClusterSettings[] settings;
    private final RaftGroup group;
    private final AtomicBoolean fatal = new AtomicBoolean();

    private record Node(ClusterNode cluster, LockRegistry registry, LeaseholdServer server, RegistryTimer timer) {
    }

    /**
     * @param clientPorts the protocol port each node binds (free loopback ports, see {@link Ports#free})
     * @param clientAddresses the {@code host:port} each node is known by to clients (its
     *        {@code client-address}; a proxy's address, or {@code 127.0.0.1:clientPort})
     */
    private InProcessCluster(Path dir, int[] clientPorts, String[] clientAddresses, Duration electionMin,
            Duration electionMax, long lockDelayNanos, long snapshotEvery) throws IOException {
        int n = clientPorts.length;
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            peers.put(id(i), new ClusterSettings.Peer("127.0.0.1:" + Ports.free(), clientAddresses[i]));
        }
        nodes = new Node[n];
        stopped = new boolean[n];
        settings = new ClusterSettings[n];
        for (int i = 0; i < n; i++) {
            // The server's defaults, but for what a test sets: election timeouts, snapshot interval.
            ClusterSettings d = ClusterSettings.defaults(id(i), peers, dir.resolve(id(i)));
            settings[i] = new ClusterSettings(d.nodeId(), d.peers(), d.raftDir(), electionMin, electionMax,
                    d.maxBatch(), d.maxInFlight(), d.maxPending(), snapshotEvery, d.initialToken());
            ClusterNode c = new ClusterNode(settings[i], NanoClock.SYSTEM, () -> fatal.set(true));
            // The production wiring of a cluster node (ClusterConfiguration, NodeMode), with test limits.
            NodeMode mode = new ClusterConfiguration.Cluster(c);
            LockRegistry r = NodeMode.registry(mode, new RegistryLimits(100, 1000, 100, 1000, lockDelayNanos), NanoClock.SYSTEM,
                    RegistryObserver.NONE);
            LeaseholdServer.Settings server = LeaseholdServer.Settings.defaults("127.0.0.1", clientPorts[i]);
            // A test's few sessions on one event loop; a short drain keeps a node's stop quick.
            LeaseholdServer srv = NodeMode.server(mode, new LeaseholdServer.Settings(server.host(), server.port(),
                    server.maxKeyBytes(), server.frameTimeout(), 100, 1, Duration.ofSeconds(2), 128, server.maxWait()), r,
                    NanoClock.SYSTEM, new ServerStats(), ServerSecurity.NONE);
            nodes[i] = new Node(c, r, srv, new RegistryTimer(r));
        }
        java.util.List<RaftPeer> raftPeers = new java.util.ArrayList<>();
        for (Map.Entry<String, ClusterSettings.Peer> e : peers.entrySet()) {
            raftPeers.add(RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue().raftAddress()).build());
        }
        group = RaftGroup.valueOf(ClusterNode.GROUP_ID, raftPeers);
    }

    /** {@code 127.0.0.1:port} for each port: the client addresses of nodes that advertise themselves. */
    public static String[] loopback(int[] clientPorts) {
        String[] addresses = new String[clientPorts.length];
        for (int i = 0; i < clientPorts.length; i++) {
            addresses[i] = "127.0.0.1:" + clientPorts[i];
        }
        return addresses;
    }

    /**
     * Builds and starts every node (protocol server first, then Raft, as the Spring lifecycle
     * does); the first election follows on its own, see {@link #awaitServingLeader}.
     */
    public static InProcessCluster start(Path dir, int[] clientPorts, String[] clientAddresses, Duration electionMin,
            Duration electionMax) throws IOException {
        return start(dir, clientPorts, clientAddresses, electionMin, electionMax, Duration.ZERO);
    }

    /** As above, with {@code leasehold.lock-delay} on every node (PROTOCOL.md section 12). */
    public static InProcessCluster start(Path dir, int[] clientPorts, String[] clientAddresses, Duration electionMin,
            Duration electionMax, Duration lockDelay) throws IOException {
        return start(dir, clientPorts, clientAddresses, electionMin, electionMax, lockDelay, 100_000);
    }

    /** As above, with a snapshot (and a purge of the log up to it) every {@code snapshotEvery} log entries. */
    public static InProcessCluster start(Path dir, int[] clientPorts, String[] clientAddresses, Duration electionMin,
            Duration electionMax, Duration lockDelay, long snapshotEvery) throws IOException {
        InProcessCluster c = new InProcessCluster(dir, clientPorts, clientAddresses, electionMin, electionMax,
                lockDelay.toNanos(), snapshotEvery);
        try {
            for (Node n : c.nodes) {
                n.timer().start();
                n.server().start();
                n.cluster().start();
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static String id(int i) {
        return "n" + i;
    }

    /** The Raft group of every node (for a test's own Raft client). */
    public RaftGroup raftGroup() {
        return group;
    }

    public int size() {
        return nodes.length;
    }

    /** True while node {@code i} runs and serves as leader (it grants). */
    public boolean serving(int i) {
        return nodes[i].cluster().isRunning() && nodes[i].cluster().serving();
    }

    public boolean running(int i) {
        return nodes[i].cluster().isRunning();
    }

    /** Node {@code i}'s cluster side (role, status, replicated table). */
    public ClusterNode node(int i) {
        return nodes[i].cluster();
    }

    /** Node {@code i}'s registry (a leader's view; empty on a follower). */
    public LockRegistry registry(int i) {
        return nodes[i].registry();
    }

    /** The index of a running node that serves, other than {@code not} (-1: any), within 30 s. */
    public int awaitServingLeader(int not) {
        return Wait.until("a serving leader" + (not < 0 ? "" : " other than " + id(not)), Duration.ofSeconds(30),
                Duration.ofMillis(20), () -> {
                    for (int i = 0; i < nodes.length; i++) {
                        if (i != not && serving(i)) {
                            return new Wait.Seen<>(i, id(i) + " serves");
                        }
                    }
                    return Wait.Seen.<Integer>nothing(roles());
                }, Wait.Seen::found).value();
    }

    /**
     * Waits (30 s) until every running node names node {@code leader} as the leader. A leader can
     * serve while a founder is still forming (its Raft division not up yet): until that node
     * learns the leader it answers {@code X 8} without a hint, which a test of the hint must not see.
     */
    public void awaitEveryNodeNames(int leader) {
        Wait.until("every running node to name " + id(leader) + " as the leader", Duration.ofSeconds(30),
                Duration.ofMillis(20), () -> {
                    StringBuilder seen = new StringBuilder();
                    boolean all = true;
                    for (int i = 0; i < nodes.length; i++) {
                        if (nodes[i] == null || !nodes[i].cluster().isRunning()) {
                            continue;
                        }
                        ClusterNode.Status s = nodes[i].cluster().status();
                        seen.append(id(i)).append(" names '").append(s.leader()).append("' (").append(s.role()).append("); ");
                        all &= s.leader().equals(id(leader));
                    }
                    return all ? new Wait.Seen<>(Boolean.TRUE, seen.toString()) : Wait.Seen.<Boolean>nothing(seen.toString());
                }, Wait.Seen::found);
    }

    /** Each node's role as a wait's failure shows it: "n1 LEADER serving term 2; n2 FOLLOWER term 2; n3 not running". */
    private String roles() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < nodes.length; i++) {
            b.append(id(i)).append(' ');
            if (nodes[i] == null || !nodes[i].cluster().isRunning()) {
                b.append("not running");
            } else {
                ClusterNode.Status s = nodes[i].cluster().status();
                b.append(s.role()).append(s.serving() ? " serving" : "").append(" term ").append(s.term());
            }
            b.append(i + 1 < nodes.length ? "; " : "");
        }
        return b.toString();
    }

    /**
     * Moves leadership to node {@code to} with Ratis's leadership transfer (what a drain does),
     * leaving every node running, and waits until {@code to} serves. The old leader stops serving
     * on the way: {@code B} to its queued Acquires, {@code X 9} on its sessions.
     */
    public void transferLeadership(int to) throws IOException {
        int from = awaitServingLeader(-1);
        RaftProperties props = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(
                settings[0].electionTimeoutMax().toMillis() * 2, TimeUnit.MILLISECONDS));
        try (RaftClient client = RaftClient.newBuilder().setProperties(props).setRaftGroup(group)
                .setClientId(ClientId.randomId()).setLeaderId(RaftPeerId.valueOf(id(from)))
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5,
                        TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                .build()) {
            RaftClientReply reply = client.admin().transferLeadership(RaftPeerId.valueOf(id(to)),
                    settings[0].electionTimeoutMax().toMillis() * 4);
            if (!reply.isSuccess()) {
                throw new IOException("leadership transfer " + id(from) + " -> " + id(to) + " failed: " + reply);
            }
        }
        Wait.until(id(to) + " to serve after the transfer from " + id(from), Duration.ofSeconds(30), Duration.ofMillis(20),
                () -> Wait.Seen.nothing(roles()), seen -> serving(to));
    }

    /** Stops node {@code i} as a drain does (a serving leader hands leadership over first). */
    public void stop(int i) {
        Node n = nodes[i];
        if (n == null || stopped[i]) {
            return;
        }
        stopped[i] = true;
        if (n.cluster().isRunning()) {
            n.cluster().stop();
        }
        n.server().stop();
        n.timer().stop();
    }

    /** True if some node reported a failed Raft log (it would have halted a real process). */
    public boolean logFailed() {
        return fatal.get();
    }

    /** Stops every node that still runs. */
    @Override
    public void close() {
        for (int i = 0; i < nodes.length; i++) {
            stop(i);
        }
    }

}
