package dev.leasehold.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.server.LeaseholdServer;
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
 * <h2>Failure of the log</h2>
 * {@code notifyLogFailed} halts the process: a node that cannot append must not go on serving.
 */
public final class ClusterNode implements ServingGate, SmartLifecycle, LockStateMachine.Listener {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    /** One Raft group per cluster; the id only has to agree between the nodes. */
    static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
            UUID.nameUUIDFromBytes("leasehold-cluster".getBytes(StandardCharsets.UTF_8)));

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

    private LockRegistry registry;
    private LeaseholdServer server;
    private RaftServer raftServer;
    /** Admin calls only (leadership transfer on drain); proposals go in-process, see {@link #propose}. */
    private volatile RaftClient client;
    /** The proposer's identity towards Ratis's retry cache: (client id, call id) names a proposal. */
    private final ClientId proposerId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private ScheduledExecutorService roles;
    /** Resets gRPC channels to the peers when the leader is lost (see {@link #reconnectPeers}). */
    private ScheduledExecutorService reconnects;

    /** The epoch this node serves in, 0 while it does not serve (see {@link #servingEpoch()}). */
    private volatile long servingEpoch;
    /** Epochs started so far; roles thread only. */
    private long epochs;
    private volatile RaftPeerId leaderId;
    private volatile boolean running;
    /** Stopped serving for lack of majority heartbeats while Ratis still leads; roles thread only. */
    private boolean heartbeatsLost;

    /** Whether this node has Raft storage it may vote with (see {@link Formation}). */
    public enum Storage {
        /** Storage present (or formatted at the first formation): an ordinary member. */
        FORMED,
        /** Empty storage; probing the peers before it may format. No vote, no log. */
        WAITING,
        /** Empty storage and the cluster exists: never votes or serves until replaced. */
        REFUSED
    }

    private volatile Storage storage = Storage.WAITING;
    /** Started with {@code join} on empty storage: waiting for {@link Membership#add} (no formation). */
    private volatile boolean joining;
    /** This node is no longer in the configuration (removed online); logged once. */
    private volatile boolean removedLogged;
    private Membership membership;
    /** The formation decision while storage is empty; roles thread only. */
    private Formation formation;
    private RaftClient probes;
    private long formationStart;
    private long lastFormationLog;
    private String lastProbeError = "";

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
        this.roster = new RosterKeeper(settings.nodeId(), group, stateMachine,
                tls == null ? new Parameters() : tls.clientParameters(), TimeDuration.valueOf(
                        Math.max(1000, settings.electionTimeoutMax().toMillis()), TimeUnit.MILLISECONDS),
                this::propose);
        this.proposer = new Proposer(this::propose, settings.maxBatch(), settings.maxInFlight(),
                settings.maxPending(), clock, n -> commitObserver.accept(n), this::proposalFailed);
    }

    /** The registry's decision log: every state change becomes a Raft entry. */
    public DecisionLog decisions() {
        return proposer;
    }

    /**
     * No token of this cluster that this node knows of is higher: the replicated counter, or the
     * last token it issued as leader if that is not applied yet (metric
     * {@code leasehold_token_high_water}; an operator records it to set
     * {@code leasehold.cluster.initial-token} after losing every disk).
     */
    public long tokenHighWater() {
        return Math.max(Math.max(stateMachine.counter(), proposer.lastIssued()), settings.initialToken());
    }

    /** The registry's token source: the replicated counter, continued by the serving leader. */
    public TokenSource tokens() {
        return proposer;
    }

    /** Wires the leader view (the registry) and the protocol server whose sessions get {@code X 9}. */
    public void attach(LockRegistry registry, LeaseholdServer server) {
        this.registry = registry;
        this.server = server;
    }

    /** Observes each batch's propose-to-commit time in nanoseconds (metrics). */
    public void onCommit(LongConsumer observer) {
        this.commitObserver = observer;
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public synchronized void start() {
        if (registry == null || server == null) {
            throw new IllegalStateException("ClusterNode.attach(registry, server) was not called");
        }
        roles = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "leasehold-cluster-roles");
            t.setDaemon(true);
            return t;
        });
        reconnects = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "leasehold-cluster-reconnect");
            t.setDaemon(true);
            return t;
        });
        RaftProperties props = raftProperties();
        checkPeersSpeakAsWeDo();
        boolean stored = Formation.hasStorage(settings.raftDir(), GROUP_ID.getUuid().toString());
        try {
            // With storage: RECOVER it. Without: Raft runs without the group (no vote, no log) until
            // the formation probe decides (Formation): never a silent format of a lost disk.
            RaftServer.Builder b = RaftServer.newBuilder().setServerId(selfId).setProperties(props)
                    .setParameters(tls == null ? new Parameters() : tls.serverParameters())
                    .setStateMachine(stateMachine).setOption(RaftStorage.StartupOption.RECOVER);
            raftServer = (stored ? b.setGroup(group) : b).build();
            raftServer.start();
        } catch (IOException e) {
            throw new IllegalStateException("Cannot start the Raft server of node " + settings.nodeId()
                    + " on " + settings.self().raftAddress() + " (leasehold.cluster.peers." + settings.nodeId()
                    + ".raft-address) with data in " + settings.raftDir() + ": " + e.getMessage(), e);
        }
        client = newClient();
        proposer.start();
        running = true;
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
            LOG.warn("Node {}: no Raft storage in {}; asking the peers {} whether the cluster was already formed "
                    + "before this node may format it and vote", settings.nodeId(), settings.raftDir(), peerIds());
            formationStart = clock.nanoTime();
            roles.execute(this::formationRound);
        }
        roles.scheduleWithFixedDelay(this::tendRoster, 250, 250, TimeUnit.MILLISECONDS);
        roles.scheduleWithFixedDelay(this::checkMajorityHeartbeats, 100, 100, TimeUnit.MILLISECONDS);
        LOG.info("Cluster node {} started: Raft on {} ({}), peers {}, data in {}", settings.nodeId(),
                settings.self().raftAddress(), tls == null ? "plaintext" : "mutual TLS, " + tls.property(),
                settings.peers().keySet(), settings.raftDir());
    }

    /**
     * Mixed settings fail fast: a TLS node that reaches a plaintext peer, or a plaintext node that
     * reaches a TLS peer, stops here naming the setting, rather than joining a cluster it can
     * never talk to. Peers not up yet are not known and do not stop the start.
     */
    private void checkPeersSpeakAsWeDo() {
        Duration timeout = Duration.ofMillis(Math.max(1000, settings.electionTimeoutMin().toMillis()));
        for (Map.Entry<String, ClusterSettings.Peer> e : settings.peers().entrySet()) {
            if (e.getKey().equals(settings.nodeId())) {
                continue;
            }
            String address = e.getValue().raftAddress();
            PeerProbe.Speaks speaks = PeerProbe.probe(address, tls == null ? null : tls.keyManager(), timeout);
            if (tls == null && speaks == PeerProbe.Speaks.TLS) {
                throw new IllegalStateException("Node " + settings.nodeId() + " has no leasehold.cluster.tls.bundle, "
                        + "but peer " + e.getKey() + " at " + address + " speaks TLS on its Raft port: it would refuse "
                        + "this node. Set leasehold.cluster.tls.bundle on every node of the cluster, or on none");
            }
            if (tls != null && speaks == PeerProbe.Speaks.PLAINTEXT) {
                throw new IllegalStateException("Node " + settings.nodeId() + " has " + tls.property()
                        + ", but peer " + e.getKey() + " at " + address + " speaks plaintext on its Raft port: set "
                        + "leasehold.cluster.tls.bundle on every node of the cluster, or on none");
            }
            LOG.debug("Peer {} at {}: {}", e.getKey(), address, speaks);
        }
    }

    private java.util.Set<String> peerIds() {
        java.util.Set<String> ids = new java.util.LinkedHashSet<>(settings.peers().keySet());
        ids.remove(settings.nodeId());
        return ids;
    }

    /** On the roles thread: one probe of every peer, then act on the decision or probe again. */
    private void formationRound() {
        if (!running || formation == null) {
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
                closeProbes();
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
                if (now - lastFormationLog > TimeUnit.SECONDS.toNanos(10)) {
                    lastFormationLog = now;
                    LOG.warn("Node {}: still waiting to hear from every peer before forming the cluster on empty "
                            + "storage {} ({} s; peers seen: {}; last probe error {})", settings.nodeId(),
                            settings.raftDir(), TimeUnit.NANOSECONDS.toSeconds(now - formationStart),
                            formation.lastSeen() + (formation.needsRoster() ? ", roster " + formation.rosterAnswer()
                                    + " (no leader answered yet)" : ""), lastProbeError);
                }
                // Each probe of a peer without the group costs it a WARN with a stack trace (Ratis logs
                // every failed groupInfo), so not faster than this.
                roles.schedule(this::formationRound, 500, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** What one peer's Raft port says about the group (bounded by the probe client's timeout). */
    private Formation.PeerState probe(RaftPeerId peer) {
        try {
            GroupInfoReply info = probeClient().getGroupManagementApi(peer).info(GROUP_ID);
            if (!info.isSuccess()) {
                lastProbeError = peer + ": " + info.getException();
                return noSuchGroup(info.getException())
                        ? Formation.PeerState.EMPTY : Formation.PeerState.UNREACHABLE;
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

    /**
     * True if the peer said it has no such group. Over gRPC the admin service hands the peer's
     * GroupMismatchException back as a StatusRuntimeException INTERNAL whose message is the
     * exception's ("n2: group-9B315B3F8218 not found."), so the text is the only sign of it.
     */
    private static boolean noSuchGroup(Throwable t) {
        String notFound = GROUP_ID + " not found";
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
                    .setParameters(tls == null ? new Parameters() : tls.clientParameters())
                    .setClientId(ClientId.randomId()).setRetryPolicy(RetryPolicies.noRetry()).build();
        }
        return probes;
    }

    /** First formation: format the storage for the group; from here on this node is an ordinary member. */
    private void bootstrap() {
        closeProbes();
        try {
            RaftClientReply r = raftServer.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), selfId,
                    callIds.incrementAndGet(), group, true));
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

    private void closeProbes() {
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

    /** The admin client (leadership transfer on drain), aimed at this node. */
    private RaftClient newClient() {
        RaftProperties clientProps = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(clientProps,
                TimeDuration.valueOf(settings.electionTimeoutMax().toMillis(), TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder().setProperties(clientProps).setRaftGroup(group)
                .setParameters(tls == null ? new Parameters() : tls.clientParameters()).setClientId(ClientId.randomId())
                .setLeaderId(selfId).setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
                        TimeDuration.valueOf(20, TimeUnit.MILLISECONDS))).build();
    }

    private RaftProperties raftProperties() {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, Collections.singletonList(settings.raftDir().toFile()));
        String raft = settings.self().raftAddress();
        int port = Integer.parseInt(raft.substring(raft.lastIndexOf(':') + 1));
        GrpcConfigKeys.Server.setPort(p, port);
        if (!settings.raftBindAddress().isEmpty()) {
            GrpcConfigKeys.Server.setHost(p, settings.raftBindAddress());
        }
        // Ratis's admin service (setConfiguration, transferLeadership) and client service on the
        // Raft port itself, behind its mutual TLS when on: never on a port of their own.
        GrpcConfigKeys.Admin.setPort(p, port);
        GrpcConfigKeys.Client.setPort(p, port);
        TimeDuration min = TimeDuration.valueOf(settings.electionTimeoutMin().toMillis(), TimeUnit.MILLISECONDS);
        TimeDuration max = TimeDuration.valueOf(settings.electionTimeoutMax().toMillis(), TimeUnit.MILLISECONDS);
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, min);
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, max);
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, min);
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, max);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, settings.snapshotEvery());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("32MB"));
        // Ratis waits at least 1 ms between two appendEntries by default. With one batch in flight
        // that wait sits on every commit's path (a hand-off is one commit); 0, as Ozone's SCM sets.
        // Measured with max-in-flight 1 on 2 cores: a small gain inside the noise (bench/NOTES.md).
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, TimeDuration.ZERO);
        // The only read-only request is the roster query of a node with empty storage: it must see
        // every committed entry, so the leader confirms its leadership first (read index).
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // leasehold.cluster.raft-properties last: the operator's tuning wins over the defaults above
        // (the keys Leasehold must own were refused at start-up).
        RaftOverrides.apply(p, settings.raftProperties());
        return p;
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
            long start = System.nanoTime();
            try {
                // An explicit target: with none, Ratis steps down and waits for an election timeout.
                RaftPeerId target = handoverTarget();
                RaftClientReply reply = client.admin().transferLeadership(target,
                        settings.electionTimeoutMax().toMillis() * 2);
                LOG.info("Drain: leadership handed over in {} ms ({})",
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), reply.isSuccess() ? "done" : reply);
            } catch (IOException | RuntimeException e) {
                LOG.warn("Drain: leadership transfer failed ({}); stopping anyway", e.toString());
            }
        }
        stepDown("stopping");
        proposer.stop();
        roles.shutdownNow();
        reconnects.shutdownNow();
        closeProbes();
        roster.close();
        try {
            client.close();
            raftServer.close();
        } catch (IOException e) {
            LOG.warn("Closing the Raft server: {}", e.toString());
        }
    }

    /**
     * The voter to hand leadership to on drain: of the current configuration's voters (a listener
     * cannot lead), the one whose reported commit index is highest (so it has the most of the log
     * and needs no catch-up); null if none (then Ratis steps down without a target).
     */
    private RaftPeerId handoverTarget() {
        RaftServer.Division d = division();
        if (d == null) {
            return null;
        }
        Map<String, Long> commits = new java.util.HashMap<>();
        for (RaftProtos.CommitInfoProto c : d.getCommitInfos()) {
            commits.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
        }
        RaftPeerId best = null;
        long bestIndex = Long.MIN_VALUE;
        for (RaftPeer p : d.getRaftConf().getCurrentPeers(RaftProtos.RaftPeerRole.FOLLOWER)) {
            long index = commits.getOrDefault(p.getId().toString(), -1L);
            if (!p.getId().equals(selfId) && index > bestIndex) {
                best = p.getId();
                bestIndex = index;
            }
        }
        return best;
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
        execute(this::promoteIfReady);
    }

    @Override
    public void leaderChanged(RaftPeerId leader) {
        leaderId = leader;
        leaderChanges.incrementAndGet();
        LOG.info("Node {}: leader is now {}", settings.nodeId(), leader);
        if (leader == null) {
            reconnectPeers();
        }
        if (leader == null || !leader.equals(selfId)) {
            execute(() -> stepDown("leader is now " + leader));
        }
    }

    @Override
    public void notLeader() {
        execute(() -> stepDown("no longer leader"));
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
        execute(() -> {
            if (!serving()) {
                return;
            }
            stepDown("a proposal failed: " + error);
            // Still leader? Serve again once every entry of the log is applied (the failed batch
            // may still commit), so the new view starts from the whole committed state.
            roles.schedule(this::promoteIfReady, 50, TimeUnit.MILLISECONDS);
        });
    }

    /** On the roles thread: serve if this node is the ready leader and has applied its whole log. */
    private void promoteIfReady() {
        if (!running || serving()) {
            return;
        }
        RaftServer.Division division = division();
        DivisionInfo info = division == null ? null : division.getInfo();
        if (info == null || !info.isLeader() || !info.isLeaderReady()) {
            return;
        }
        TermIndex last = division.getRaftLog().getLastEntryTermIndex(); // null while the log is empty
        if (last != null && info.getLastAppliedIndex() < last.getIndex()) {
            roles.schedule(this::promoteIfReady, 10, TimeUnit.MILLISECONDS); // catching up
            return;
        }
        LockStateMachine.Snapshot table = stateMachine.read();
        long start = clock.nanoTime();
        registry.reset();
        registry.promote(table.held(), settings.electionTimeoutMax().toNanos());
        // Before the first batch of this term: a roster start decided on the table as applied now.
        roster.promoting(table.counter() > 0 || !table.held().isEmpty(), settings.peers().keySet());
        roster.tick(division.getCommitInfos());
        long epoch = ++epochs; // a session from an older epoch is never served again: it gets X 9
        long above = Math.max(table.counter(), settings.initialToken()); // a new cluster's floor
        proposer.open(above);
        leaderId = selfId;
        servingEpoch = epoch;
        LOG.info("Node {} serves as leader (term {}): {} grants promoted, tokens continue above {} ({} ms)",
                settings.nodeId(), info.getCurrentTerm(), table.held().size(), above,
                TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start));
    }

    /** On the roles thread, a few times a second: a serving leader records members with storage. */
    private void tendRoster() {
        try {
            RaftServer.Division local = division();
            if (joining && local != null) {
                joining = false;
                storage = Storage.FORMED;
                LOG.info("Node {}: added to the cluster (as a non-voting listener until it has caught up); Raft "
                        + "storage formatted in {}", settings.nodeId(), settings.raftDir());
            }
            admitAddedMembers();
            if (local != null && storage == Storage.FORMED && !removedLogged && stateMachine.rosterRemoved(settings.nodeId())) {
                removedLogged = true;
                LOG.error("Node {} was removed from the cluster (leasehold cluster remove): it no longer votes or "
                        + "serves. Stop it and delete its data directory; it can never rejoin under id {}",
                        settings.nodeId(), settings.nodeId());
            }
            RaftServer.Division d = serving() ? local : null;
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
            Map<String, ClusterSettings.Peer> added = new java.util.TreeMap<>();
            stateMachine.directory().forEach((id, a) -> added.put(id, new ClusterSettings.Peer(a.raftAddress(),
                    a.clientAddress(), a.identity().isEmpty() ? null : a.identity())));
            java.util.Set<String> removed = new java.util.TreeSet<>(stateMachine.removedIds());
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
     * serves again by {@link #promoteIfReady}, from the whole committed table, as after a failed
     * proposal. During a configuration change (two majorities) Ratis's own check decides.
     */
    private void checkMajorityHeartbeats() {
        try {
            RaftServer.Division d = division();
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
            if (!majority && serving()) {
                heartbeatsLost = true;
                stepDown("no answer from a majority of the voters for over " + limit + " ms (heard from " + heard
                        + " of " + voters.size() + ", itself included)");
            } else if (majority && heartbeatsLost) {
                heartbeatsLost = false;
                LOG.info("Node {}: a majority answers again while still leader: serving again", settings.nodeId());
                promoteIfReady();
            }
        } catch (RuntimeException e) {
            // never let one failure end the periodic task
            LOG.warn("Majority heartbeat check failed: {}", e.toString());
        }
    }

    /** On the roles thread (or in stop): stop serving, if serving. */
    private void stepDown(String why) {
        if (!serving()) {
            return;
        }
        servingEpoch = 0; // from here on a lock request is refused: X 9 on a session served as leader
        proposer.close();
        registry.drain(); // B to queued Acquires (they need no commit)
        server.leadershipLost();
        registry.reset();
        LOG.info("Node {} stopped serving: {}", settings.nodeId(), why);
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
    private void reconnectPeers() {
        ScheduledExecutorService s = reconnects;
        RaftServer rs = raftServer;
        if (s == null || s.isShutdown() || rs == null) {
            return;
        }
        try {
            s.execute(() -> {
                // Only while no leader is known: a reset that lands after this election was won
                // (the executor runs late on a starved machine) would cut the new leader's
                // appendEntries streams, so it loses its majority heartbeats and the election
                // starts again: seen as leaders lost within 2 s of winning, round after round,
                // in partition runs at load average 15-20.
                if (leaderId != null) {
                    return;
                }
                RaftServer.Division d = division();
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
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // stopping
        }
    }

    private void execute(Runnable r) {
        ScheduledExecutorService s = roles;
        if (s != null && !s.isShutdown()) {
            try {
                s.execute(r);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // stopping
            }
        }
    }

    /**
     * Proposes one batch to this node's own Raft server, in-process: no RaftClient, so no gRPC
     * round trip to ourselves, no serialisation and no sliding-window threads per batch (a third
     * to a half of the leader's CPU per commit went there). Batches are proposed from the proposer
     * thread only; Ratis appends a write in the calling thread, so log order is proposal order
     * (roster entries, from the roles thread, may land between two batches: order does not matter
     * to them). A batch that
     * cannot commit fails (not leader, step-down, or no commit within a few election timeouts) and
     * the node stops serving until it has applied its whole log again.
     */
    private CompletableFuture<?> propose(byte[] batch) {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(proposerId).setServerId(selfId)
                .setGroupId(GROUP_ID).setCallId(callIds.incrementAndGet())
                .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(batch)))
                .setType(RaftClientRequest.writeRequestType()).build();
        CompletableFuture<RaftClientReply> reply;
        try {
            reply = raftServer.submitClientRequestAsync(request);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        long timeoutMs = Math.max(5_000, settings.electionTimeoutMax().toMillis() * 3);
        return reply.orTimeout(timeoutMs, TimeUnit.MILLISECONDS).thenApply(r -> {
            if (!r.isSuccess()) {
                throw new IllegalStateException("not committed: " + r.getException());
            }
            return r;
        });
    }

    private RaftServer.Division division() {
        try {
            RaftServer s = raftServer;
            return s == null ? null : s.getDivision(GROUP_ID);
        } catch (IOException e) {
            return null;
        }
    }

    private DivisionInfo info() {
        RaftServer.Division d = division();
        return d == null ? null : d.getInfo();
    }

    private boolean isLeader() {
        DivisionInfo i = info();
        return i != null && i.isLeader();
    }

    // ------------------------------------------------------------------ ServingGate

    /** True while this node is the ready leader and has promoted: it serves lock requests. */
    public boolean serving() {
        return servingEpoch != 0;
    }

    @Override
    public long servingEpoch() {
        return servingEpoch;
    }

    @Override
    public String leaderHint() {
        RaftPeerId l = leaderId;
        if (l == null || l.equals(selfId)) {
            return ""; // unknown, or this node (never name the node that answers)
        }
        return clientAddress(l.toString()).map(a -> "leader=" + a).orElse("");
    }

    /** A member's protocol address: from the settings, or, for a member added online, the roster. */
    java.util.Optional<String> clientAddress(String memberId) {
        ClusterSettings.Peer p = settings.peers().get(memberId);
        if (p != null) {
            return java.util.Optional.of(p.clientAddress());
        }
        Roster.Addresses a = stateMachine.directory().get(memberId);
        return java.util.Optional.ofNullable(a == null ? null : a.clientAddress());
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
            long appliedIndex, long leaderChanges, int replicatedHeldKeys, int proposerBacklog, Storage storage) {

        /**
         * Readiness: joined (the division runs in a Raft role, not starting or stopping), and a
         * serving leader is known (this node or another).
         */
        public boolean ready() {
            return DivisionReading.isRaftRole(role) && !leader.isEmpty() && (serving || !"LEADER".equals(role));
        }

        /**
         * Why the division cannot be counted on yet, or null when it runs in a Raft role or is
         * absent (stopped, no storage): health reports the node out of service with this reason.
         */
        public String notYetRunning() {
            return switch (role) {
                case DivisionReading.STARTING -> "the Raft division is starting: no role yet";
                case DivisionReading.UNKNOWN -> "the Raft division could not be read (closing or reinitializing)";
                default -> null;
            };
        }
    }

    /**
     * A consistent-enough view for health and metrics (each field read once, without locks).
     * Never throws: a probe or a scrape while the division starts, stops or reinitializes gets a
     * state of its own ({@link DivisionReading}).
     */
    public Status status() {
        DivisionReading r = DivisionReading.of(division(),
                storage == Storage.FORMED ? DivisionReading.STOPPED : "NO_STORAGE");
        RaftPeerId l = leaderId;
        return new Status(settings.nodeId(), r.role(), serving(), r.term(), l == null ? "" : l.toString(),
                r.commitIndex(), r.appliedIndex(), leaderChanges.get(), stateMachine.heldKeys(),
                proposer.backlog(), storage);
    }

    /**
     * Online membership changes and the member list (docs/cluster.md "Changing members"); made
     * once, on first use, after {@link #start}.
     */
    public synchronized Membership membership() {
        if (membership == null) {
            membership = new Membership(this, stateMachine, tls == null ? new Parameters() : tls.clientParameters());
        }
        return membership;
    }

    /** This node's local Raft view, or null while it has no group (empty storage). */
    RaftServer.Division localDivision() {
        return division();
    }

    /** The leader this node knows of, or null. */
    RaftPeerId knownLeader() {
        return leaderId;
    }

    /** The settings this node runs with. */
    public ClusterSettings settings() {
        return settings;
    }
}
