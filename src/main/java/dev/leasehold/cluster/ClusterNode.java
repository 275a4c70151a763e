package dev.leasehold.cluster;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import dev.leasehold.cluster.Formation.Storage;
import dev.leasehold.cluster.tls.RaftTls;
import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.ServingGate;

/**
 * One node of a Leasehold cluster (PROTOCOL.md section 10): an embedded Ratis server whose state
 * machine is the replicated grant table, and the switch between serving (leader) and not serving.
 *
 * <h2>Roles</h2>
 * A leader becomes <em>serving</em> once Ratis reports it ready (its first entry of the term is
 * applied, so every committed entry is in the table). It then <em>promotes</em>: the registry is
 * loaded with every committed grant, each running for its longest requested lease plus the
 * election timeout from now, and tokens continue above the replicated counter. While serving, the
 * registry's decisions go through the {@link Proposer} and answers wait for their commit. When it
 * stops serving (another leader, lost majority, a failed proposal, drain) it answers {@code B} to
 * the queued Acquires, sends {@code X 9} on every session and empties the registry. A node that
 * does not serve answers {@code X 8} with the leader's client address.
 *
 * <h2>Empty storage</h2>
 * A node whose Raft storage directory is empty does not let Ratis format it: it runs Raft without
 * the group (no vote, no log) and probes its peers until {@link Formation} decides: format at the
 * cluster's first formation, or refuse for good when the cluster already holds data (a lost disk;
 * health {@code storage: REFUSED}).
 *
 * <h2>Transport</h2>
 * With a {@link RaftTls} every Raft connection (peers, and Ratis's admin and client services, which
 * share the Raft port) is mutual TLS between member certificates; without one it is plaintext.
 * Before it starts Raft, the node probes its reachable peers and refuses to start if one speaks
 * the other transport ({@link PeerProbe}).
 *
 * <h2>Where things are</h2>
 * This class is the Raft host: the lifecycle, Ratis's events and the {@link ServingGate}. The
 * serving switch is {@link ServingSwitch}; the empty-storage rounds {@link FormationRounds}; the
 * periodic roster and heartbeat checks {@link RosterTender}; proposals {@link LocalProposals};
 * channel resets {@link PeerChannels}; the Ratis configuration {@link RaftConfig}. Each of them
 * sees this node through one {@link RaftHost}.
 *
 * <h2>Failure of the log</h2>
 * {@code notifyLogFailed} halts the process: a node that cannot append must not go on serving.
 */
public final class ClusterNode implements ServingGate, SmartLifecycle, LockStateMachine.Listener {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    /** One Raft group per cluster; the id only has to agree between the nodes. */
    static final RaftGroupId GROUP_ID = RaftConfig.GROUP_ID;

    private final ClusterSettings settings;
    private final NanoClock clock;
    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final Proposer proposer;
    private final LockStateMachine stateMachine;
    /** Gets this node into the replicated roster of members with storage; asks it while empty. */
    private final RosterKeeper roster;
    private final Runnable onFatal;
    /** Mutual TLS on the Raft port and to the peers; null: plaintext. */
    private final RaftTls tls;
    private final AtomicLong leaderChanges = new AtomicLong();
    private volatile LongConsumer commitObserver = nanos -> {
    };
    private final LocalProposals proposals;
    private final PeerChannels channels;
    private final RolesThread roles = new RolesThread("leasehold-cluster-roles");
    private final ServingSwitch switcher;
    private final FormationRounds formation;
    private final RosterTender tender;
    /** Whether this node was removed from the cluster, and the members a leader hint may name. */
    private final Removal removal;
    private final FloorSnapshots floorSnapshots;
    /** This node as its parts see it: the one view handed to each of them. */
    private final RaftHost host = new Host();

    private RaftServer raftServer;
    /** Admin calls only (leadership transfer on drain); proposals go in-process ({@link LocalProposals}). */
    private volatile RaftClient client;
    private volatile RaftPeerId leaderId;
    private volatile boolean running;
    private Membership membership;

    /**
     * @param onFatal what a log failure does: halt the process (tests record it instead)
     */
    public ClusterNode(ClusterSettings settings, NanoClock clock, Runnable onFatal) {
        this(settings, clock, onFatal, null);
    }

    /**
     * @param onFatal what a log failure does: halt the process (tests record it instead)
     * @param tls mutual TLS for every Raft connection, or null for plaintext
     */
    public ClusterNode(ClusterSettings settings, NanoClock clock, Runnable onFatal, RaftTls tls) {
        this.settings = settings;
        this.tls = tls;
        this.clock = clock;
        this.onFatal = onFatal;
        this.selfId = RaftPeerId.valueOf(settings.nodeId());
        List<RaftPeer> peers = new ArrayList<>();
        for (Map.Entry<String, ClusterSettings.Peer> e : settings.peers().entrySet()) {
            // Not setClientAddress: Ratis would send its own client RPCs there. Our client address
            // (the lock protocol port) lives in the settings, for X 8 hints.
            peers.add(RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue().raftAddress()).build());
        }
        this.group = RaftGroup.valueOf(GROUP_ID, peers);
        this.stateMachine = new LockStateMachine(this);
        this.proposals = new LocalProposals(host);
        this.roster = new RosterKeeper(settings.nodeId(), group, stateMachine, RaftConfig.clientParameters(tls),
                TimeDuration.valueOf(Math.max(1000, settings.electionTimeoutMax().toMillis()), TimeUnit.MILLISECONDS),
                proposals::propose);
        this.proposer = new Proposer(proposals::propose, settings.maxBatch(), settings.maxInFlight(),
                settings.maxPending(), clock, n -> commitObserver.accept(n), this::proposalFailed);
        this.channels = new PeerChannels(host, group);
        this.switcher = new ServingSwitch(host, clock, proposer, roster, stateMachine::read, roles::schedule);
        this.formation = new FormationRounds(host, group, RaftConfig.clientParameters(tls), roster, clock, roles,
                proposals);
        this.removal = new Removal(settings.nodeId(), clock, roles::execute,
                why -> switcher.stepDown("removed from the cluster (" + why + ")"));
        this.tender = new RosterTender(host, stateMachine, roster, formation, switcher, removal, tls);
        this.floorSnapshots = new FloorSnapshots(settings, stateMachine, proposer, switcher, removal);
    }

    /** The registry's decision log: every state change becomes a Raft entry. */
    public DecisionLog decisions() {
        return proposer;
    }

    /**
     * No token of this cluster that this node knows of is higher: the replicated counter, or the last
     * token it issued as leader if that is not applied yet (metric {@code leasehold_token_high_water}).
     */
    public long tokenHighWater() {
        return Math.max(Math.max(stateMachine.counter(), proposer.lastIssued()), settings.initialToken());
    }

    /** A token-floor snapshot, on the serving leader only ({@link FloorSnapshots}); else IllegalStateException. */
    public TokenFloorSnapshot floorSnapshot(Instant now) {
        return floorSnapshots.take(now, leaderHint());
    }

    /** The registry's token source: the replicated counter, continued by the serving leader. */
    public TokenSource tokens() {
        return proposer;
    }

    /**
     * Wires the leader view (the registry) and what ends the sessions served as leader.
     *
     * @param leadershipLost tells the protocol server that leadership is lost: {@code X 9} on every session
     */
    public void attach(LockRegistry registry, Runnable leadershipLost) {
        switcher.attach(registry, leadershipLost);
    }

    /** Observes each batch's propose-to-commit time in nanoseconds (metrics). */
    public void onCommit(LongConsumer observer) {
        this.commitObserver = observer;
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public synchronized void start() {
        if (!switcher.attached()) {
            throw new IllegalStateException("ClusterNode.attach(registry, leadershipLost) was not called");
        }
        roles.start();
        channels.start();
        RaftProperties props = RaftConfig.serverProperties(settings);
        PeerProbe.checkPeersSpeakAs(settings, tls);
        boolean stored = Formation.hasStorage(settings.raftDir(), GROUP_ID.getUuid().toString());
        try {
            // With storage: RECOVER it. Without: Raft runs without the group (no vote, no log) until
            // the formation probe decides (Formation): never a silent format of a lost disk.
            RaftServer.Builder b = RaftServer.newBuilder().setServerId(selfId)
                    .setProperties(props).setParameters(RaftConfig.serverParameters(tls))
                    .setStateMachine(stateMachine).setOption(RaftStorage.StartupOption.RECOVER);
            raftServer = (stored ? b.setGroup(group) : b).build();
            raftServer.start();
        } catch (IOException e) {
            throw new IllegalStateException("Cannot start the Raft server of node " + settings.nodeId()
                    + " on " + settings.self().raftAddress() + " (leasehold.cluster.peers." + settings.nodeId()
                    + ".raft-address) with data in " + settings.raftDir() + ": " + e.getMessage(), e);
        }
        client = RaftConfig.adminClient(settings, group, selfId, tls);
        proposer.start();
        running = true;
        formation.start(stored);
        roles.every(tender::tend, 250);
        roles.every(tender::checkMajorityHeartbeats, 100);
        LOG.info("Cluster node {} started: Raft on {} ({}), peers {}, data in {}", settings.nodeId(),
                settings.self().raftAddress(), tls == null ? "plaintext" : "mutual TLS, " + tls.property(),
                settings.peers().keySet(), settings.raftDir());
    }

    /**
     * Drain: a serving leader first hands leadership to another node (so the cluster goes on
     * without an election timeout), which makes it stop serving: {@code B} to queued Acquires and
     * {@code X 9} on every session. Then the Raft server stops.
     */
    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        if (serving() || isLeader()) {
            long start = clock.nanoTime();
            try {
                // An explicit target: with none, Ratis steps down and waits for an election timeout.
                RaftPeerId target = Handover.target(host.division(), selfId);
                RaftClientReply reply = client.admin().transferLeadership(target,
                        settings.electionTimeoutMax().toMillis() * 2);
                LOG.info("Drain: leadership handed over in {} ms ({})",
                        TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start), reply.isSuccess() ? "done" : reply);
            } catch (IOException | RuntimeException e) {
                LOG.warn("Drain: leadership transfer failed ({}); stopping anyway", e.toString());
            }
        }
        switcher.stepDown("stopping");
        proposer.stop();
        roles.shutdownNow();
        channels.stop();
        formation.close();
        roster.close();
        try {
            client.close();
            raftServer.close();
        } catch (IOException e) {
            LOG.warn("Closing the Raft server: {}", e.toString());
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        // Starts after the protocol server (which answers X 8 until this node serves) and stops
        // before it, so the leadership transfer and X 9 happen before the server's own drain.
        return SmartLifecycle.DEFAULT_PHASE - 256;
    }

    // ------------------------------------------------------------------ roles

    @Override
    public void leaderReady() {
        roles.execute(switcher::promoteIfReady);
    }

    @Override
    public void leaderChanged(RaftPeerId leader) {
        leaderId = leader;
        leaderChanges.incrementAndGet();
        LOG.info("Node {}: leader is now {}", settings.nodeId(), leader);
        if (leader == null) {
            channels.reconnect();
        }
        if (leader == null || !leader.equals(selfId)) {
            roles.execute(() -> switcher.stepDown("leader is now " + leader));
        }
    }

    @Override
    public void notLeader() {
        roles.execute(() -> switcher.stepDown("no longer leader"));
    }

    @Override
    public void logFailed(Throwable cause) {
        LOG.error("Raft log failed on node {}: stopping the process rather than serving on", settings.nodeId(), cause);
        onFatal.run();
    }

    @Override
    public void unknownFormat(String message) {
        LOG.error("Node {}: {}", settings.nodeId(), message);
        onFatal.run();
    }

    private void proposalFailed(Throwable error) {
        roles.execute(() -> switcher.proposalFailed(error));
    }

    private boolean isLeader() {
        RaftServer.Division d = host.division();
        DivisionInfo i = d == null ? null : d.getInfo();
        return i != null && i.isLeader();
    }

    // ------------------------------------------------------------------ ServingGate

    /** True while this node is the ready leader and has promoted: it serves lock requests. */
    public boolean serving() {
        return switcher.serving();
    }

    @Override
    public long servingEpoch() {
        return switcher.servingEpoch();
    }

    @Override
    public String leaderHint() {
        RaftPeerId l = leaderId;
        String leader = l != null ? l.toString()
                // a node that refuses to rejoin has no Raft group: name the leader its formation probes saw
                : formation.storage() == Storage.REFUSED ? formation.leaderSeen() : null;
        return removal.hint(leader, this::clientAddress);
    }

    /** A member's protocol address: from the settings, or, for a member added online, the roster. */
    Optional<String> clientAddress(String memberId) {
        ClusterSettings.Peer p = settings.peers().get(memberId);
        if (p != null) {
            return Optional.of(p.clientAddress());
        }
        Roster.Addresses a = stateMachine.directory().get(memberId);
        return Optional.ofNullable(a == null ? null : a.clientAddress());
    }

    @Override
    public long barrier() {
        return proposer.barrier();
    }

    @Override
    public boolean committed(long barrier) {
        return proposer.committed(barrier);
    }

    @Override
    public void whenCommitted(long barrier, Committed then) {
        proposer.whenCommitted(barrier, then);
    }

    // ------------------------------------------------------------------ health and metrics

    /** What health and metrics show about this node. */
    public record Status(String nodeId, String role, boolean serving, long term, String leader, long commitIndex,
            long appliedIndex, long leaderChanges, int replicatedHeldKeys, int proposerBacklog, Storage storage,
            String removed) {

        /** Without why this node knows it was removed from the cluster: empty while it is a member. */
        public Status(String nodeId, String role, boolean serving, long term, String leader, long commitIndex,
                long appliedIndex, long leaderChanges, int replicatedHeldKeys, int proposerBacklog, Storage storage) {
            this(nodeId, role, serving, term, leader, commitIndex, appliedIndex, leaderChanges, replicatedHeldKeys,
                    proposerBacklog, storage, "");
        }

        /**
         * Readiness: a member (not removed), joined (the division runs in a Raft role, not starting
         * or stopping), and a serving leader is known (this node or another).
         */
        public boolean ready() {
            return removed.isEmpty() && DivisionReading.isRaftRole(role) && !leader.isEmpty() && (serving || !"LEADER".equals(role));
        }

        /**
         * Why the division cannot be counted on yet, or null when it runs in a Raft role or is
         * absent (stopped, no storage): health reports the node out of service with this reason.
         */
        public String notYetRunning() {
            return DivisionReading.notYetRunning(role);
        }
    }

    /**
     * A consistent-enough view for health and metrics (each field read once, without locks). Never
     * throws: a probe or a scrape while the division starts, stops or reinitializes gets its own state.
     */
    public Status status() {
        Storage storage = formation.storage();
        DivisionReading r = DivisionReading.of(host.division(),
                storage == Storage.FORMED ? DivisionReading.STOPPED : "NO_STORAGE");
        RaftPeerId l = leaderId;
        return new Status(settings.nodeId(), r.role(), serving(), r.term(), l == null ? "" : l.toString(),
                r.commitIndex(), r.appliedIndex(), leaderChanges.get(), stateMachine.heldKeys(),
                proposer.backlog(), storage, removal.reason() == null ? "" : removal.reason());
    }

    /**
     * Online membership changes and the member list (docs/cluster.md "Changing members"); made
     * once, on first use, after {@link #start}.
     */
    public synchronized Membership membership() {
        if (membership == null) {
            membership = new Membership(host, stateMachine, RaftConfig.clientParameters(tls), clock);
        }
        return membership;
    }

    /** What this node has applied: held keys with their grants and shared slots, and the counter (tests). */
    LockStateMachine.Snapshot replicated() {
        return stateMachine.read();
    }

    /** The settings this node runs with. */
    public ClusterSettings settings() {
        return settings;
    }

    /** The {@link RaftHost} of this node: reads its fields as they are now. */
    private final class Host implements RaftHost {
        @Override
        public ClusterSettings settings() {
            return settings;
        }

        @Override
        public RaftPeerId selfId() {
            return selfId;
        }

        @Override
        public RaftServer server() {
            return raftServer;
        }

        @Override
        public RaftServer.Division division() {
            try {
                RaftServer s = raftServer;
                return s == null ? null : s.getDivision(GROUP_ID);
            } catch (IOException e) {
                return null;
            }
        }

        @Override
        public RaftPeerId leader() {
            return leaderId;
        }

        @Override
        public boolean running() {
            return running;
        }

        @Override
        public boolean removed() {
            return removal.reason() != null;
        }

        @Override
        public void markSelfLeader() {
            leaderId = selfId;
        }

        @Override
        public Optional<String> clientAddress(String memberId) {
            return ClusterNode.this.clientAddress(memberId);
        }

        @Override
        public void admitAddedMembers() {
            tender.admitAddedMembers();
        }
    }
}
