package dev.leasehold.cluster;

import java.io.IOException;
import java.util.function.Supplier;

import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resets this node's gRPC channels to its peers when the leader is lost (see {@link #reconnect}),
 * on a thread of its own.
 */
final class PeerChannels {

    private static final Logger LOG = LoggerFactory.getLogger(PeerChannels.class);

    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final Supplier<RaftServer> server;
    private final Supplier<RaftServer.Division> division;
    private final Supplier<RaftPeerId> leader;
    private final RolesThread thread = new RolesThread("leasehold-cluster-reconnect");

    /**
     * @param group the configured members, used while this node has no group of its own
     * @param division this node's Raft view, or null while it has no group
     * @param leader the leader this node knows of, or null
     */
    PeerChannels(RaftPeerId selfId, RaftGroup group, Supplier<RaftServer> server,
            Supplier<RaftServer.Division> division, Supplier<RaftPeerId> leader) {
        this.selfId = selfId;
        this.group = group;
        this.server = server;
        this.division = division;
        this.leader = leader;
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
        RaftServer rs = server.get();
        if (thread.isShutdown() || rs == null) {
            return;
        }
        thread.execute(() -> {
            // Only while no leader is known: a reset that lands after this election was won
            // (the executor runs late on a starved machine) would cut the new leader's
            // appendEntries streams, so it loses its majority heartbeats and the election
            // starts again: seen as leaders lost within 2 s of winning, round after round,
            // in partition runs at load average 15-20.
            if (leader.get() != null) {
                return;
            }
            RaftServer.Division d = division.get();
            for (RaftPeer p : d == null ? group.getPeers() : d.getRaftConf().getAllPeers()) {
                if (!p.getId().equals(selfId)) {
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
