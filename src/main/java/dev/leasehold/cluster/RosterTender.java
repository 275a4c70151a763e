package dev.leasehold.cluster;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.cluster.Formation.Storage;
import dev.leasehold.cluster.tls.RaftTls;

/**
 * The node's periodic checks on its roles thread: {@link #tend} (a few times a second: the join,
 * the certificates of members added online, this node's own removal ({@link Removal}), and the roster of members with storage)
 * and {@link #checkMajorityHeartbeats} (every 100 ms: a leader cut off from its majority stops
 * serving early, see {@link MajorityHeartbeats}). Neither lets a failure end its periodic task.
 */
final class RosterTender {

    private static final Logger LOG = LoggerFactory.getLogger(RosterTender.class);

    /** The node: its settings and its local Raft view (null while it has no group). */
    private final RaftHost host;
    private final ClusterSettings settings;
    private final LockStateMachine stateMachine;
    private final RosterKeeper roster;
    private final FormationRounds formation;
    private final ServingSwitch serving;
    /** Mutual TLS on the Raft port and to the peers; null: plaintext. */
    private final RaftTls tls;

    /** Whether this node was removed from the cluster, and which members a leader hint may name. */
    private final Removal removal;
    /** Stopped serving for lack of majority heartbeats while Ratis still leads; roles thread only. */
    private boolean heartbeatsLost;

    /** @param tls mutual TLS on the Raft port and to the peers; null: plaintext */
    RosterTender(RaftHost host, LockStateMachine stateMachine, RosterKeeper roster, FormationRounds formation,
            ServingSwitch serving, Removal removal, RaftTls tls) {
        this.host = host;
        this.settings = host.settings();
        this.stateMachine = stateMachine;
        this.roster = roster;
        this.formation = formation;
        this.serving = serving;
        this.removal = removal;
        this.tls = tls;
    }

    /** On the roles thread, a few times a second: a serving leader records members with storage. */
    void tend() {
        try {
            RaftServer.Division local = host.division();
            formation.joinedIf(local != null);
            admitAddedMembers();
            if (local != null && formation.storage() == Storage.FORMED) {
                removal.check(local.getRaftConf(), local.getRaftLog().getLastCommittedIndex(),
                        stateMachine.removedIds(), host.leader() != null, roster::askRemoved);
            }
            RaftServer.Division d = serving.serving() ? local : null;
            if (d != null) {
                roster.tick(d.getCommitInfos());
            }
        } catch (RuntimeException e) {
            // never let one failure end the periodic task
            LOG.warn("Roster step failed: {}", e.toString());
        }
    }

    /** With cluster TLS, accept certificates of the members added online (the roster's directory). */
    void admitAddedMembers() {
        if (tls != null) {
            Map<String, ClusterSettings.Peer> added = new TreeMap<>();
            stateMachine.directory().forEach((id, a) -> added.put(id, new ClusterSettings.Peer(a.raftAddress(),
                    a.clientAddress(), a.identity().isEmpty() ? null : a.identity())));
            Set<String> removed = new TreeSet<>(stateMachine.removedIds());
            removed.remove(settings.nodeId());
            tls.admit(added, removed); // a removed member's certificate is refused again
        }
    }

    /**
     * On the roles thread, every 100 ms: a serving leader that has heard from no majority of the
     * voters within {@code election-timeout-max} stops serving now ({@code B}, {@code X 9}).
     * Ratis steps such a leader down by the same rule ({@code LeaderStateImpl.checkLeadership}), but
     * its leader loop runs that check once per {@code election-timeout-max} while no reply comes,
     * so a leader cut off from its majority learned it 1.5-3.0 s after the cut (seen in the
     * partition tests), where PROTOCOL.md 10 says about one election timeout. Stopping early is
     * always safe; if the majority answers again before Ratis steps down (a short cut), the node
     * serves again by {@link ServingSwitch#promoteIfReady}, from the whole committed table, as
     * after a failed proposal. During a configuration change (two majorities) Ratis's own check decides.
     */
    void checkMajorityHeartbeats() {
        try {
            RaftServer.Division d = host.division();
            DivisionInfo info = d == null ? null : d.getInfo();
            if (info == null || !info.isLeader() || !d.getRaftConf().getPreviousPeers().isEmpty()) {
                heartbeatsLost = false;
                return;
            }
            RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
            long limit = settings.electionTimeoutMax().toMillis();
            if (!role.hasLeaderInfo() || role.getRoleElapsedTimeMs() < limit) {
                return; // a new leader: its election was its contact with a majority
            }
            List<String> voters = d.getRaftConf().getCurrentPeers(RaftProtos.RaftPeerRole.FOLLOWER).stream()
                    .map(p -> p.getId().toString()).toList();
            long heard = MajorityHeartbeats.heard(voters, role.getLeaderInfo().getFollowerInfoList(), limit);
            boolean majority = MajorityHeartbeats.isMajority(heard, voters.size());
            if (!majority && serving.serving()) {
                heartbeatsLost = true;
                serving.stepDown("no answer from a majority of the voters for over " + limit + " ms (heard from "
                        + heard + " of " + voters.size() + ", itself included)");
            } else if (majority && heartbeatsLost) {
                heartbeatsLost = false;
                LOG.info("Node {}: a majority answers again while still leader: serving again", settings.nodeId());
                serving.promoteIfReady();
            }
        } catch (RuntimeException e) {
            // never let one failure end the periodic task
            LOG.warn("Majority heartbeat check failed: {}", e.toString());
        }
    }
}
