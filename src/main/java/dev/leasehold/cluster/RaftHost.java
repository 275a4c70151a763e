package dev.leasehold.cluster;

import java.util.Collection;
import java.util.Optional;

import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;

/**
 * The node as its parts see it ({@link ServingSwitch}, {@link FormationRounds}, {@link PeerChannels},
 * {@link LocalProposals}, {@link RosterTender}, {@link Membership}): the Raft server and what the
 * node knows of it right now. {@code ClusterNode} implements it once and hands the same view to
 * each part, rather than one lambda per field. A view, not the node: the registry, the proposer
 * and the lifecycle stay out of the parts' reach.
 *
 * <p>Every getter reads the node's current state (the server is made at start, the leader changes
 * with Ratis's events), so a part reads it when it acts, never once at construction.
 */
interface RaftHost {

    /** The settings this node runs with. */
    ClusterSettings settings();

    /** This node's Raft id. */
    RaftPeerId selfId();

    /** This node's Raft server, or null before it starts. */
    RaftServer server();

    /** This node's local Raft view, or null while it has none (not started, or empty storage: no group). */
    RaftServer.Division division();

    /** The leader this node knows of, or null. */
    RaftPeerId leader();

    /** False before start and once the node stops: nothing new is started then. */
    boolean running();

    /** True once this node knows it was removed from the cluster ({@link Removal}): it never serves again. */
    default boolean removed() {
        return false;
    }

    /** Records this node as the known leader: the serving switch calls it just before it serves. */
    void markSelfLeader();

    /** A member's protocol address: from the settings, or, for a member added online, the roster. */
    Optional<String> clientAddress(String memberId);

    /** With cluster TLS, accept the certificates of the members added online (the roster's directory). */
    void admitAddedMembers();

    /** This node as the ready leader, for promotion; null when it is not (not leader, not ready, no group). */
    default ReadyLeader readyLeader() {
        return ReadyLeader.of(division());
    }

    /**
     * What promotion needs of the local Raft division, read when this node is the ready leader.
     *
     * @param lastLogIndex the index of the log's last entry; -1 while the log is empty (nothing to wait for)
     */
    record ReadyLeader(long term, long appliedIndex, long lastLogIndex, Collection<CommitInfoProto> commitInfos) {

        /** Read from {@code d}: null when it is absent, or not the leader, or not ready yet. */
        static ReadyLeader of(RaftServer.Division d) {
            DivisionInfo info = d == null ? null : d.getInfo();
            if (info == null || !info.isLeader() || !info.isLeaderReady()) {
                return null;
            }
            TermIndex last = d.getRaftLog().getLastEntryTermIndex(); // null while the log is empty
            return new ReadyLeader(info.getCurrentTerm(), info.getLastAppliedIndex(),
                    last == null ? RaftLog.INVALID_LOG_INDEX : last.getIndex(), d.getCommitInfos());
        }
    }
}
