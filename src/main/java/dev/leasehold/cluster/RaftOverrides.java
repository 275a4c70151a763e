package dev.leasehold.cluster;

import java.util.List;
import java.util.Map;

import org.apache.ratis.conf.RaftProperties;

/**
 * {@code leasehold.cluster.raft-properties}: Ratis properties an operator sets on top of
 * Leasehold's own ({@link ClusterNode}), for tuning what Leasehold does not (appender buffers,
 * group commit, write buffer, gRPC flow control). Keys Leasehold owns for safety or wiring are
 * refused: what they would change is either set from another Leasehold setting or is a guarantee
 * the lock service gives (every answer waits for its commit, every fsync Raft needs stays).
 */
public final class RaftOverrides {

    /** A key, or a prefix ending in {@code .}, that Leasehold owns, and why. */
    private record Owned(String key, String why) {

        boolean covers(String k) {
            return key.endsWith(".") ? k.startsWith(key) : k.equals(key);
        }
    }

    private static final String ELECTION = "Leasehold sets it from leasehold.cluster.election-timeout-min/-max, "
            + "which also bound how long a new leader runs every lease";
    private static final String WIRING = "Leasehold sets it from leasehold.cluster.peers and raft-bind-address "
            + "(the admin and client services share the Raft port, behind its TLS)";
    private static final String TLS = "Leasehold wires Raft TLS from leasehold.cluster.tls.bundle";
    private static final String SNAPSHOT = "Leasehold sets snapshots and log purging from leasehold.cluster.snapshot-every";

    private static final List<Owned> OWNED = List.of(
            new Owned("raft.server.storage.dir", "Leasehold keeps the Raft log under leasehold.data-dir"),
            new Owned("raft.server.removed.groups.dir", "Leasehold keeps the Raft log under leasehold.data-dir"),
            new Owned("raft.rpc.type", "Leasehold's cluster runs on gRPC only"),
            new Owned("raft.netty.", "Leasehold's cluster runs on gRPC only"),
            new Owned("raft.grpc.server.host", WIRING),
            new Owned("raft.grpc.server.port", WIRING),
            new Owned("raft.grpc.admin.host", WIRING),
            new Owned("raft.grpc.admin.port", WIRING),
            new Owned("raft.grpc.client.host", WIRING),
            new Owned("raft.grpc.client.port", WIRING),
            new Owned("raft.grpc.tls.", TLS),
            new Owned("raft.grpc.server.tls.", TLS),
            new Owned("raft.grpc.admin.tls.", TLS),
            new Owned("raft.grpc.client.tls.", TLS),
            new Owned("raft.server.rpc.timeout.", ELECTION),
            new Owned("raft.server.rpc.first-election.timeout.", ELECTION),
            // Ratis 3.2.2 has no switch that stops the log's fsync as such; these two are what
            // would answer before the entry is on disk (unsafe flush marks it flushed before
            // force() returns) or never write it at all (the in-memory log).
            new Owned("raft.server.log.unsafe-flush.enabled", "it acknowledges entries before their fsync"),
            new Owned("raft.server.log.use.memory", "it keeps the Raft log in memory only"),
            new Owned("raft.server.snapshot.", SNAPSHOT),
            new Owned("raft.server.log.purge.", SNAPSHOT),
            new Owned("raft.server.log.appender.install.snapshot.enabled", SNAPSHOT),
            new Owned("raft.server.read.", "the roster query of a node with empty storage needs linearizable reads"));

    private RaftOverrides() {
    }

    /**
     * Why {@code key} may not be set through {@code leasehold.cluster.raft-properties}, or null when
     * it may.
     */
    public static String refusal(String key) {
        if (key == null || !key.startsWith("raft.")) {
            return "must be a Ratis property (a key starting with raft.)";
        }
        for (Owned o : OWNED) {
            if (o.covers(key)) {
                return "Leasehold owns this Ratis property: " + o.why();
            }
        }
        return null;
    }

    /** Sets every entry on {@code p}, after Leasehold's own settings (so an entry wins). */
    static void apply(RaftProperties p, Map<String, String> overrides) {
        overrides.forEach(p::set);
    }
}
