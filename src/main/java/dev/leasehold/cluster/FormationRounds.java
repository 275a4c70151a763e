package dev.leasehold.cluster;

import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.cluster.Formation.Storage;
import dev.leasehold.registry.NanoClock;

/**
 * A node's storage state, and the rounds that get an empty storage formed: with
 * {@code leasehold.cluster.join} it waits to be added ({@link Membership#add}); otherwise it
 * probes its peers on the roles thread until {@link Formation} decides, then formats or refuses
 * for good. The decision is {@link Formation}'s; this class does the probing, the formatting and
 * the logging.
 */
final class FormationRounds {

    private static final Logger LOG = LoggerFactory.getLogger(FormationRounds.class);

    /** The node: its settings and id, whether it runs, and the Raft server that formats the storage. */
    private final RaftHost host;
    private final ClusterSettings settings;
    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final Parameters clientParameters;
    private final RosterKeeper roster;
    private final NanoClock clock;
    private final RolesThread roles;
    private final LocalProposals calls;

    private volatile Storage storage = Storage.WAITING;
    /** Started with {@code join} on empty storage: waiting for {@link Membership#add} (no formation). */
    private volatile boolean joining;
    /** The formation decision while storage is empty; roles thread only. */
    private Formation formation;
    private RaftClient probes;
    private long formationStart;
    private long lastFormationLog;
    private volatile String leaderSeen;
    private String lastProbeError = "";

    /**
     * @param group the configured members: the peers to probe, and the group to format
     * @param calls call ids for the in-process group add that formats the storage
     */
    FormationRounds(RaftHost host, RaftGroup group, Parameters clientParameters, RosterKeeper roster,
            NanoClock clock, RolesThread roles, LocalProposals calls) {
        this.host = host;
        this.settings = host.settings();
        this.selfId = host.selfId();
        this.group = group;
        this.clientParameters = clientParameters;
        this.roster = roster;
        this.clock = clock;
        this.roles = roles;
        this.calls = calls;
    }

    /** Whether this node has Raft storage it may vote with. */
    Storage storage() {
        return storage;
    }

    /**
     * After the Raft server started: with storage, an ordinary member; with {@code join}, wait to
     * be added; otherwise start the formation rounds.
     */
    void start(boolean stored) {
        if (stored) {
            storage = Storage.FORMED;
        } else if (settings.join()) {
            storage = Storage.WAITING;
            joining = true;
            LOG.warn("Node {}: no Raft storage in {} and leasehold.cluster.join=true: waiting to be added to the "
                    + "cluster; on a member run: leasehold cluster add {} --raft-address {} --client-address {} "
                    + "(docs/cluster.md, \"Changing members\"). It does not vote until then.", settings.nodeId(),
                    settings.raftDir(), settings.nodeId(), settings.self().raftAddress(), settings.self().clientAddress());
        } else {
            storage = Storage.WAITING;
            formation = new Formation(peerIds());
            // INFO: the normal first start of every member; a wiped member that must not rejoin is an ERROR below
            LOG.info("Node {}: no Raft storage in {}; asking the peers {} whether the cluster was already formed "
                    + "before this node may format it and vote", settings.nodeId(), settings.raftDir(), peerIds());
            formationStart = clock.nanoTime();
            roles.execute(this::round);
        }
    }

    /** A joining node that now has the group was added: its storage is formatted. */
    void joinedIf(boolean hasGroup) {
        if (joining && hasGroup) {
            joining = false;
            storage = Storage.FORMED;
            LOG.info("Node {}: added to the cluster (as a non-voting listener until it has caught up); Raft "
                    + "storage formatted in {}", settings.nodeId(), settings.raftDir());
        }
    }

    private Set<String> peerIds() {
        Set<String> ids = new LinkedHashSet<>(settings.peers().keySet());
        ids.remove(settings.nodeId());
        return ids;
    }

    /** On the roles thread: one probe of every peer, then act on the decision or probe again. */
    private void round() {
        if (!host.running() || formation == null) {
            return;
        }
        for (RaftPeer p : group.getPeers()) {
            if (!p.getId().equals(selfId)) {
                formation.observe(p.getId().toString(), probe(p.getId()));
            }
        }
        if (formation.needsRoster()) {
            formation.roster(roster.ask());
        }
        switch (formation.decision()) {
            case BOOTSTRAP -> bootstrap();
            case REFUSE -> {
                close();
                storage = Storage.REFUSED;
                LOG.error("Node {} REFUSES to vote or serve: its Raft storage {} is empty, but peer {} holds the formed "
                        + "cluster (peers seen: {}) and the cluster's roster records that node {} stored the log before. "
                        + "This node's disk was lost or replaced; under its old id it could help "
                        + "elect a leader that lacks committed grants and tokens. It stays out of the cluster. "
                        + "To bring it back, replace the member (docs/cluster.md, \"When a disk is lost\"); "
                        + "do not copy another node's data directory into it.", settings.nodeId(), settings.raftDir(),
                        formation.formedBy(), formation.lastSeen(), settings.nodeId());
            }
            case WAIT -> {
                long now = clock.nanoTime();
                // Peers started together take a few seconds to answer: warn only after 10 s of waiting.
                if (now - formationStart >= TimeUnit.SECONDS.toNanos(10)
                        && now - lastFormationLog > TimeUnit.SECONDS.toNanos(10)) {
                    lastFormationLog = now;
                    LOG.warn("Node {}: still waiting to hear from every peer before forming the cluster on empty "
                            + "storage {} ({} s; peers seen: {}; last probe error {})", settings.nodeId(),
                            settings.raftDir(), TimeUnit.NANOSECONDS.toSeconds(now - formationStart),
                            formation.lastSeen() + (formation.needsRoster() ? ", roster " + formation.rosterAnswer()
                                    + " (no leader answered yet)" : ""), lastProbeError);
                }
                // Each probe of a peer without the group costs it a failed groupInfo with a stack trace
                // (Ratis logs it at WARN; application.yml turns that logger down to ERROR), so not faster than this.
                roles.schedule(this::round, 500);
            }
        }
    }

    /** What one peer's Raft port says about the group (bounded by the probe client's timeout). */
    private Formation.PeerState probe(RaftPeerId peer) {
        try {
            GroupInfoReply info = probeClient().getGroupManagementApi(peer).info(RaftConfig.GROUP_ID);
            if (!info.isSuccess()) {
                lastProbeError = peer + ": " + info.getException();
                return noSuchGroup(info.getException())
                        ? Formation.PeerState.EMPTY : Formation.PeerState.UNREACHABLE;
            }
            String leader = leaderOf(peer, info.getRoleInfoProto());
            if (leader != null) {
                leaderSeen = leader;
            }
            RaftProtos.LogInfoProto l = info.getLogInfoProto();
            boolean data = l != null && (l.hasLastEntry() || l.hasLastSnapshot() || l.hasCommitted());
            return data ? Formation.PeerState.FORMED : Formation.PeerState.FORMING;
        } catch (IOException | RuntimeException e) {
            if (noSuchGroup(e)) {
                return Formation.PeerState.EMPTY;
            }
            lastProbeError = peer + ": " + e;
            return Formation.PeerState.UNREACHABLE;
        }
    }

    /** The leader a peer's group info names: the peer itself if it leads, else the leader it follows; or null. */
    static String leaderOf(RaftPeerId peer, RaftProtos.RoleInfoProto role) {
        if (role == null) {
            return null;
        }
        if (role.getRole() == RaftProtos.RaftPeerRole.LEADER) {
            return peer.toString();
        }
        if (role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()
                && role.getFollowerInfo().getLeaderInfo().hasId()) {
            String id = role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
            return id.isEmpty() ? null : id;
        }
        return null;
    }

    /**
     * The cluster's leader as this node's formation probes last saw it, or null. A node that
     * refuses to rejoin (a lost disk) never learns the leader through Raft: this is what its
     * {@code X 8} can name, so that clients go to the leader (PROTOCOL.md 9.12).
     */
    String leaderSeen() {
        return leaderSeen;
    }

    /**
     * True if the peer said it has no such group. Over gRPC the admin service hands the peer's
     * GroupMismatchException back as a StatusRuntimeException INTERNAL whose message is the
     * exception's ("n2: group-9B315B3F8218 not found."), so the text is the only sign of it.
     */
    private static boolean noSuchGroup(Throwable t) {
        String notFound = RaftConfig.GROUP_ID + " not found";
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof GroupMismatchException || String.valueOf(c.getMessage()).contains(notFound)) {
                return true;
            }
        }
        return false;
    }

    /** A client for formation probes only: no retries, a short timeout, so one round is bounded. */
    private RaftClient probeClient() {
        if (probes == null) {
            RaftProperties clientProps = new RaftProperties();
            RaftClientConfigKeys.Rpc.setRequestTimeout(clientProps, TimeDuration.valueOf(1, TimeUnit.SECONDS));
            probes = RaftClient.newBuilder().setProperties(clientProps).setRaftGroup(group)
                    .setParameters(clientParameters)
                    .setClientId(ClientId.randomId()).setRetryPolicy(RetryPolicies.noRetry()).build();
        }
        return probes;
    }

    /** First formation: format the storage for the group; from here on this node is an ordinary member. */
    private void bootstrap() {
        close();
        try {
            RaftClientReply r = host.server().groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), selfId,
                    calls.nextCallId(), group, true));
            if (!r.isSuccess()) {
                throw new IOException(String.valueOf(r.getException()));
            }
        } catch (IOException e) {
            LOG.error("Node {}: formatting the Raft storage in {} failed: {}", settings.nodeId(), settings.raftDir(),
                    e.toString());
            storage = Storage.REFUSED;
            return;
        }
        storage = Storage.FORMED;
        LOG.info("Node {}: {}, Raft storage formatted in {}", settings.nodeId(), formation.formedBy() == null
                ? "first formation of the cluster: no peer holds data"
                : "joins the formed cluster: its roster says this id never stored the log (a founding member that "
                        + "started after the others)", settings.raftDir());
        formation = null;
    }

    /** Closes the probe client, if open. */
    void close() {
        RaftClient p = probes;
        probes = null;
        if (p != null) {
            try {
                p.close();
            } catch (IOException e) {
                LOG.debug("Closing the formation probe client: {}", e.toString());
            }
        }
    }
}
