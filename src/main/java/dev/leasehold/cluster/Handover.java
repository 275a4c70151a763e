package dev.leasehold.cluster;

import java.util.HashMap;
import java.util.Map;

import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

/** Whom a draining leader hands leadership to ({@code ClusterNode.stop}). */
final class Handover {

    private Handover() {
    }

    /**
     * Of the current configuration's voters other than {@code self} (a listener cannot lead), the
     * one whose reported commit index is highest (so it has the most of the log and needs no
     * catch-up); null if none, or no division (then Ratis steps down without a target).
     */
    static RaftPeerId target(RaftServer.Division d, RaftPeerId self) {
        if (d == null) {
            return null;
        }
        Map<String, Long> commits = new HashMap<>();
        for (RaftProtos.CommitInfoProto c : d.getCommitInfos()) {
            commits.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
        }
        RaftPeerId best = null;
        long bestIndex = Long.MIN_VALUE;
        for (RaftPeer p : d.getRaftConf().getCurrentPeers(RaftProtos.RaftPeerRole.FOLLOWER)) {
            long index = commits.getOrDefault(p.getId().toString(), -1L);
            if (!p.getId().equals(self) && index > bestIndex) {
                best = p.getId();
                bestIndex = index;
            }
        }
        return best;
    }
}
