package dev.leasehold.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * How one node of a cluster runs (PROTOCOL.md section 10), validated by the configuration layer.
 *
 * @param nodeId this node; a key of {@code peers}
 * @param peers every node, this one included: id → addresses
 * @param raftDir Raft log and snapshots (under {@code leasehold.data-dir})
 * @param electionTimeoutMin Raft's randomised election timeout, lower bound
 * @param electionTimeoutMax upper bound; also what a new leader adds to every promoted lease
 * @param maxBatch decisions per Raft log entry at most
 * @param maxInFlight batches proposed and not yet committed at most
 * @param maxPending decisions waiting to be proposed before Acquires get {@code B}
 * @param snapshotEvery log entries between snapshots (the log is purged up to the snapshot)
 * @param initialToken a serving leader issues tokens above this and above the replicated
 *        counter, whichever is higher: the floor of a new cluster (docs/cluster.md, "Tokens never go back")
 * @param join this node is not a founding member: with empty storage it neither forms nor votes,
 *        it waits until {@code leasehold cluster add} adds it (docs/cluster.md "Changing members")
 * @param raftBindAddress the local address the Raft port listens on; empty: every interface
 * @param raftProperties Ratis properties applied after Leasehold's own (checked by {@link RaftOverrides})
 */
public record ClusterSettings(String nodeId, Map<String, Peer> peers, Path raftDir, Duration electionTimeoutMin,
        Duration electionTimeoutMax, int maxBatch, int maxInFlight, int maxPending, long snapshotEvery, long initialToken,
        boolean join, String raftBindAddress, Map<String, String> raftProperties) {

    /** Default of {@code leasehold.cluster.election-timeout-min}, in milliseconds. */
    public static final long DEFAULT_ELECTION_TIMEOUT_MIN_MILLIS = 750;
    /** Default of {@code leasehold.cluster.election-timeout-max}, in milliseconds. */
    public static final long DEFAULT_ELECTION_TIMEOUT_MAX_MILLIS = 1500;
    /** Default of {@code leasehold.cluster.max-batch}. */
    public static final int DEFAULT_MAX_BATCH = 256;
    /** Default of {@code leasehold.cluster.max-in-flight}. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 1;
    /** Default of {@code leasehold.cluster.max-pending}. */
    public static final int DEFAULT_MAX_PENDING = 65536;
    /** Default of {@code leasehold.cluster.snapshot-every}. */
    public static final long DEFAULT_SNAPSHOT_EVERY = 100_000;
    /** Default of {@code leasehold.cluster.initial-token}. */
    public static final long DEFAULT_INITIAL_TOKEN = 0;

    public ClusterSettings {
        raftProperties = raftProperties == null ? Map.of() : Map.copyOf(raftProperties);
    }

    /** Without Ratis property overrides. */
    public ClusterSettings(String nodeId, Map<String, Peer> peers, Path raftDir, Duration electionTimeoutMin,
            Duration electionTimeoutMax, int maxBatch, int maxInFlight, int maxPending, long snapshotEvery,
            long initialToken, boolean join, String raftBindAddress) {
        this(nodeId, peers, raftDir, electionTimeoutMin, electionTimeoutMax, maxBatch, maxInFlight, maxPending,
                snapshotEvery, initialToken, join, raftBindAddress, Map.of());
    }

    /** A founding member ({@code join} false). */
    public ClusterSettings(String nodeId, Map<String, Peer> peers, Path raftDir, Duration electionTimeoutMin,
            Duration electionTimeoutMax, int maxBatch, int maxInFlight, int maxPending, long snapshotEvery,
            long initialToken) {
        this(nodeId, peers, raftDir, electionTimeoutMin, electionTimeoutMax, maxBatch, maxInFlight, maxPending,
                snapshotEvery, initialToken, false, "");
    }

    /**
     * A founding member with every other setting at the server's default, what
     * {@code LeaseholdProperties} binds when only the node id and peers are set: its
     * {@code @DefaultValue}s are these constants, so an embedded or test cluster built from this
     * cannot drift from a configured one.
     *
     * @param nodeId this node; a key of {@code peers}
     * @param peers every node, this one included
     * @param raftDir where this node keeps its Raft log and snapshots
     */
    public static ClusterSettings defaults(String nodeId, Map<String, Peer> peers, Path raftDir) {
        return new ClusterSettings(nodeId, peers, raftDir, Duration.ofMillis(DEFAULT_ELECTION_TIMEOUT_MIN_MILLIS),
                Duration.ofMillis(DEFAULT_ELECTION_TIMEOUT_MAX_MILLIS), DEFAULT_MAX_BATCH, DEFAULT_MAX_IN_FLIGHT,
                DEFAULT_MAX_PENDING, DEFAULT_SNAPSHOT_EVERY, DEFAULT_INITIAL_TOKEN);
    }

    /**
     * One node's addresses.
     *
     * @param raftAddress host:port of its Raft (gRPC) endpoint
     * @param clientAddress host:port clients use for the lock protocol (named in {@code X 8} hints)
     * @param identity with cluster TLS, the typed SAN ({@code dns:}, {@code ip:}, {@code uri:}) that
     *        names this node in its certificate; null: its {@code raftAddress} host (the rules are in
     *        {@code tls.PeerIdentities}, named, not linked: the settings stay below the TLS code that reads them)
     */
    public record Peer(String raftAddress, String clientAddress, String identity) {

        /** A peer named by the host of its Raft address. */
        public Peer(String raftAddress, String clientAddress) {
            this(raftAddress, clientAddress, null);
        }

        /** The host part of {@code raftAddress} (brackets of an IPv6 literal removed). */
        public String raftHost() {
            String host = raftAddress.substring(0, raftAddress.lastIndexOf(':'));
            return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        }
    }

    /** This node's addresses. */
    public Peer self() {
        return peers.get(nodeId);
    }
}
