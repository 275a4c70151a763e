package dev.leasehold.test;

import java.nio.file.Path;
import java.time.Duration;

import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.cluster.Formation;
import dev.leasehold.config.ClusterConfiguration;
import dev.leasehold.config.NodeMode;
import dev.leasehold.config.SingleNodeConfiguration;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.RegistryTimer;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerStats;
import dev.leasehold.store.DataDirectory;
import dev.leasehold.store.RecoveryGrace;

/**
 * One node built by the server's own wiring ({@link NodeMode#registry}, {@link NodeMode#server},
 * the single-node or cluster {@link NodeMode}) without a Spring context, with the server's
 * default limits ({@link RegistryLimits#defaults()}, {@link LeaseholdServer.Settings#defaults}):
 * what the Spring configuration builds, minus Actuator, metrics and TLS, and sized for a test.
 * Started and stopped in the order the Spring lifecycle uses.
 */
final class EmbeddedNode {

    /** A test server is for this host's tests only, whatever a configured server binds. */
    private static final String LOOPBACK = "127.0.0.1";
    /** A test's sessions end with it; a short drain keeps close() quick. */
    private static final Duration DRAIN = Duration.ofSeconds(1);
    /**
     * A test opens tens of sessions, not the server's tens of thousands; and the embedded server
     * shares the test's JVM and open-file limit, so it claims little of either: one event loop,
     * a short accept queue.
     */
    private static final int MAX_CONNECTIONS = 1000;
    private static final int IO_THREADS = 1;
    private static final int LISTEN_BACKLOG = 128;

    private final SingleNodeConfiguration.SingleNode single; // null for a cluster member
    private final ClusterNode cluster; // null for a single node
    private final LockRegistry registry;
    private final LeaseholdServer server;
    private final RegistryTimer timer;

    private EmbeddedNode(SingleNodeConfiguration.SingleNode single, ClusterNode cluster, NodeMode mode, int port) {
        this.single = single;
        this.cluster = cluster;
        this.registry = NodeMode.registry(mode, RegistryLimits.defaults(), NanoClock.SYSTEM, RegistryObserver.NONE);
        LeaseholdServer.Settings defaults = LeaseholdServer.Settings.defaults(LOOPBACK, port);
        LeaseholdServer.Settings settings = new LeaseholdServer.Settings(defaults.host(), defaults.port(),
                defaults.maxKeyBytes(), defaults.frameTimeout(), MAX_CONNECTIONS, IO_THREADS, DRAIN, LISTEN_BACKLOG,
                defaults.maxWait());
        this.server = NodeMode.server(mode, settings, registry, NanoClock.SYSTEM, new ServerStats(), ServerSecurity.NONE);
        this.timer = new RegistryTimer(registry);
    }

    /** A single node on {@code dataDir} (its state kept across restarts), port 0 picks a free port. */
    static EmbeddedNode single(Path dataDir, int port) {
        SingleNodeConfiguration.SingleNode mode = SingleNodeConfiguration.open(DataDirectory.prepare(dataDir),
                RecoveryGrace.AUTO);
        try {
            return new EmbeddedNode(mode, null, mode, port);
        } catch (RuntimeException e) {
            mode.close();
            throw e;
        }
    }

    /** A member of a cluster; {@code onFatal} runs where a process would halt (a failed Raft log). */
    static EmbeddedNode member(ClusterSettings settings, int clientPort, Runnable onFatal) {
        ClusterNode node = new ClusterNode(settings, NanoClock.SYSTEM, onFatal);
        return new EmbeddedNode(null, node, new ClusterConfiguration.Cluster(node), clientPort);
    }

    /** Timer, protocol server, then Raft (a follower answers X 8 until it serves). */
    void start() {
        try {
            timer.start();
            server.start();
            if (cluster != null) {
                cluster.start();
            }
        } catch (RuntimeException e) {
            stop();
            throw e;
        }
    }

    /** Raft first (a leader hands leadership over), then the protocol server's drain, then files. */
    void stop() {
        try {
            if (cluster != null && cluster.isRunning()) {
                cluster.stop();
            }
        } finally {
            try {
                server.stop();
                timer.stop();
            } finally {
                if (single != null) {
                    single.close();
                }
            }
        }
    }

    /** Acquires queued on this node now. */
    int waiters() {
        return registry.waiters();
    }

    int port() {
        return server.port();
    }

    /** True while this cluster member leads and grants (a single node always serves). */
    boolean serving() {
        return cluster == null || (cluster.isRunning() && cluster.serving());
    }

    /** A single node; a cluster member with formed storage that knows a serving leader. */
    boolean ready() {
        if (cluster == null) {
            return true;
        }
        ClusterNode.Status s = cluster.status();
        return s.storage() == Formation.Storage.FORMED && s.ready();
    }

    ClusterNode.Status status() {
        return cluster == null ? null : cluster.status();
    }
}
