package dev.leasehold.cluster;

import java.io.IOException;

import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resets this node's gRPC channels to its peers when the leader is lost (see {@link #reconnect}),
 * on a thread of its own.
 */
final class PeerChannels {

    private static final Logger LOG = LoggerFactory.getLogger(PeerChannels.class);

    /** The node: its server, its Raft view (null while it has no group) and the leader it knows of. */
    private final RaftHost host;
    private final RaftGroup group;
    private final RolesThread thread = new RolesThread("leasehold-cluster-reconnect");

    /** @param group the configured members, used while this node has no group of its own */
    PeerChannels(RaftHost host, RaftGroup group) {
        this.host = host;
        this.group = group;
    }

    void start() {
        thread.start();
    }

    void stop() {
        thread.shutdownNow();
    }

    /**
     * The leader is lost and an election starts: give every peer a fresh gRPC channel, so a new
     * TCP connection. The one this node has may not deliver in time: after a partition heals, a
     * connection whose packets were dropped waits for its next TCP retransmission, which backs off
     * to seconds while the link is down. Measured without this reset: twice in 200 partition
     * faults the node that had been cut in the round before won the next election and its
     * appendEntries reached its one live peer 11.7 and 13.0 s later (failovers of 13.8 and 14.7 s);
     * with it, never in 100 (docs/cluster.md, "New gRPC channels when the leader is lost"). On
     * Ratis 3.2.0 a channel to a peer that had been down also sat in gRPC's reconnect back-off and
     * failed every vote at once. A reset costs one TCP connection per peer per lost leader. Off the
     * Ratis thread that reported the change: closing a channel may wait for it to shut down.
     */
    void reconnect() {
        RaftServer rs = host.server();
        if (thread.isShutdown() || rs == null) {
            return;
        }
        thread.execute(() -> {
            // Only while no leader is known: a reset that lands after this election was won
            // (the executor runs late on a starved machine) would cut the new leader's
            // appendEntries streams, so it loses its majority heartbeats and the election
            // starts again: seen as leaders lost within 2 s of winning, round after round,
            // in partition runs at load average 15-20.
            if (host.leader() != null) {
                return;
            }
            RaftServer.Division d = host.division();
            for (RaftPeer p : d == null ? group.getPeers() : d.getRaftConf().getAllPeers()) {
                if (!p.getId().equals(host.selfId())) {
                    try {
                        rs.getServerRpc().handleException(p.getId(),
                                new IOException("leader lost: new channel to " + p.getId()), true);
                    } catch (RuntimeException e) {
                        LOG.debug("Resetting the channel to {}: {}", p.getId(), e.toString());
                    }
                }
            }
        });
    }
}
