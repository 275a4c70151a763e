package dev.leasehold.config;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.cluster.ClusterNode;
import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.cluster.tls.PeerRefusals;
import dev.leasehold.cluster.tls.RaftTls;
import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.server.Outboxes;
import dev.leasehold.settings.SettingException;
import dev.leasehold.store.DataDirectory;
import dev.leasehold.store.ReservedTokens;
import dev.leasehold.store.TokenFloorRestore;

/**
 * Cluster mode ({@code leasehold.cluster.node-id} set, PROTOCOL.md section 10): the Raft node, its
 * replicated token counter and decision log, answers gated by commits. No token file, no lease
 * horizon and no recovery grace: the log holds the exact grants and the counter. The Raft log and
 * snapshots live in {@code <data-dir>/raft}; a log that cannot be written halts the process.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClusterMode
public class ClusterConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);

    /** Refused Raft connections (cluster TLS); the meter exists, at 0, on a plaintext cluster too. */
    @Bean
    PeerRefusals peerRefusals(NanoClock clock) {
        return new PeerRefusals(clock);
    }

    @Bean
    ClusterNode clusterNode(LeaseholdProperties props, NanoClock clock, Path leaseholdDataDir, SslBundles bundles,
            PeerRefusals refusals, TokenFloorRestore.Floor restored) {
        ClusterSettings settings = settings(props.cluster(), leaseholdDataDir, restored.value());
        RaftTls tls = ClusterTlsConfiguration.raftTls(props.cluster().tls(), settings, bundles, refusals);
        return new ClusterNode(settings, clock, () -> Runtime.getRuntime().halt(70), tls);
    }

    @Bean
    NodeMode clusterMode(ClusterNode node) {
        LOG.info("Cluster mode: node {} of {}", node.settings().nodeId(), node.settings().peers().keySet());
        return new Cluster(node);
    }

    /**
     * The node's settings from {@code leasehold.cluster.*} (already validated by name). A data
     * directory that a single node used (its {@code tokens} file) must not start a cluster whose
     * tokens could fall below the single node's: start-up fails, naming
     * {@code leasehold.cluster.initial-token} and the value it needs, unless it is set that high.
     * The rule is checked where the file is, but the setting must be the same on every node: any
     * of them may lead first (docs/cluster.md). A floor restored from a snapshot raises
     * {@code initial-token} on this node ({@link TokenFloorRestore}; every founder is restored).
     */
    static ClusterSettings settings(LeaseholdProperties.Cluster c, Path dataDir, long restoredFloor) {
        long previous;
        try {
            previous = ReservedTokens.previousHighWater(dataDir);
        } catch (IOException e) {
            throw DataDirectory.openFailure(dataDir.resolve("tokens"), "read the single-node token high-water mark", e);
        }
        if (previous > c.initialToken()) {
            throw new SettingException("leasehold.cluster.initial-token", c.initialToken(),
                    "this data directory holds a single node's tokens up to " + previous
                    + " (" + dataDir.resolve("tokens") + "); set leasehold.cluster.initial-token to at least " + previous
                    + " on every node of the cluster, so that its tokens stay above them");
        }
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        c.peers().forEach((id, p) -> peers.put(id, new ClusterSettings.Peer(p.raftAddress(), p.clientAddress(), p.identity())));
        return new ClusterSettings(c.nodeId(), peers, dataDir.resolve("raft"), c.electionTimeoutMin(),
                c.electionTimeoutMax(), c.maxBatch(), c.maxInFlight(), c.maxPending(), c.snapshotEvery(),
                Math.max(c.initialToken(), restoredFloor), c.join(), c.raftBindAddress() == null ? "" : c.raftBindAddress(), c.raftProperties());
    }

    /**
     * A cluster node as a {@link NodeMode}: tokens and decisions go through its Raft log, answers
     * wait for their commit, and the node drives the registry and the sessions when its role
     * changes. The in-process test cluster wires its nodes with this too.
     */
    public record Cluster(ClusterNode node) implements NodeMode {

        @Override
        public TokenSource tokens() {
            return node.tokens();
        }

        @Override
        public LeaseHorizon horizon() {
            return LeaseHorizon.UNBOUNDED; // a new leader runs every lease longer instead (section 10)
        }

        @Override
        public DecisionLog decisions() {
            return node.decisions();
        }

        @Override
        public Outboxes outboxes() {
            return Outboxes.commitGated(node);
        }

        @Override
        public void attach(LockRegistry registry, LeaseholdServer server) {
            node.attach(registry, server::leadershipLost);
        }
    }
}
