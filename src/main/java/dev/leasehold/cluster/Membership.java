package dev.leasehold.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Changes the members of a running cluster, one at a time (docs/cluster.md "Changing members"),
 * with Ratis's own machinery: {@code setConfiguration} in {@code COMPARE_AND_SET} mode (a change
 * decided on a stale view fails instead of undoing another), joint consensus, and non-voting
 * listeners.
 *
 * <h2>The changes</h2>
 * <ul>
 *   <li><b>add</b>: the new node runs with {@code leasehold.cluster.join=true} on empty storage.
 *       It is probed first: it is asked to create the group (Ratis group add, bounded by one
 *       request timeout; this formats its storage), so an unreachable or misconfigured node fails
 *       the change before the configuration is touched. Its addresses go into the replicated
 *       roster (for {@code X 8} hints and cluster TLS), then it is added as a <em>listener</em>
 *       (it receives the log, never votes, never counts for a majority), waits until it reports
 *       the leader's commit index, and only then is promoted to voter.</li>
 *   <li><b>remove</b>: a leader that is removed hands leadership to another voter first; then the
 *       configuration without it is committed, and the roster records the id as removed: no node
 *       can ever join under it again.</li>
 *   <li><b>replace</b>: remove the lost member, then add its new incarnation under a new id.</li>
 * </ul>
 * A change that would leave fewer voters than a majority of the current voters is refused; so
 * is an id that has stored this cluster's log before (a wiped disk comes back under a new id).
 * Every call is bounded by {@link #timeoutMillis}.
 *
 * <p>Blocking (Raft RPCs, and short polls of another node's progress): call from an admin thread
 * (the {@code cluster} endpoint's own), never from an event loop. Calls are
 * serialised: one change at a time per node (and compare-and-set across nodes).
 */
public final class Membership {

    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

    /**
     * A member as the leader sees it.
     *
     * @param commitIndex the member's commit index, as it last reported it to the leader
     * @param matchIndex the highest log index the leader knows this member stores; Ratis keeps it
     *     inside the leader's process only, so it is known when the leader itself answers and
     *     {@code -1} otherwise (and for the leader itself: it stores the whole log)
     * @param lastContactMillis how long ago the leader last heard from it ({@code 0} for the leader)
     */
    public record Member(String id, String role, String raftAddress, String clientAddress, long commitIndex,
            long matchIndex, long lastContactMillis) {
    }

    /**
     * The cluster's members.
     *
     * @param leader the leader's id
     * @param term the leader's term
     * @param commitIndex the leader's commit index
     * @param members every voter and listener, the leader first
     */
    public record View(String leader, long term, long commitIndex, List<Member> members) {

        Member member(String id) {
            return members.stream().filter(m -> m.id().equals(id)).findFirst().orElse(null);
        }

        long voters() {
            return members.stream().filter(m -> !m.role().equals(LISTENER)).count();
        }
    }

    /** What a change did: its steps with their times, and the members after it. */
    public record Result(String change, long millis, List<String> steps, View after) {
    }

    /** Why a change was refused or failed; nothing was changed unless {@link #partial} says so. */
    public static final class MembershipException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** What kind of failure: the admin endpoint maps it to an HTTP status. */
        public enum Kind {
            /** The request is wrong for this cluster (unknown id, id used before, too few voters). */
            REFUSED,
            /** No leader known or reachable now: try again. */
            UNAVAILABLE,
            /** A step did not finish in time (the named node did not answer or catch up). */
            TIMEOUT,
            /** Another change committed first (compare-and-set): read the members and try again. */
            CONFLICT
        }

        private final Kind kind;
        private final boolean partial;

        MembershipException(Kind kind, String message, boolean partial) {
            super(message);
            this.kind = kind;
            this.partial = partial;
        }

        public Kind kind() {
            return kind;
        }

        /** True when an earlier step of the change was committed (the message says which). */
        public boolean partial() {
            return partial;
        }
    }

    static final String LEADER = "LEADER";
    static final String VOTER = "VOTER";
    static final String LISTENER = "LISTENER";

    private final ClusterNode node;
    private final LockStateMachine stateMachine;
    private final Parameters clientParameters;
    private final long timeoutMillis;
    private final long rpcMillis;

    Membership(ClusterNode node, LockStateMachine stateMachine, Parameters clientParameters) {
        this.node = node;
        this.stateMachine = stateMachine;
        this.clientParameters = clientParameters;
        long electionMax = node.settings().electionTimeoutMax().toMillis();
        this.rpcMillis = Math.max(2_000, electionMax * 2);
        this.timeoutMillis = Math.max(30_000, electionMax * 20);
    }

    /** The members, roles, commit indexes and last contact, as the leader reports them. */
    public synchronized View members() {
        return view(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rpcMillis * 3));
    }

    /** Adds {@code id} (running with {@code leasehold.cluster.join=true}) as a listener, then a voter. */
    public synchronized Result add(String id, String raftAddress, String clientAddress) {
        return add(id, raftAddress, clientAddress, null);
    }

    /**
     * As {@link #add(String, String, String)}; with cluster TLS the members accept the new node's
     * certificate if it names {@code identity} ({@code dns:}, {@code ip:} or {@code uri:}, as
     * {@code leasehold.cluster.peers.<id>.identity}), or, when null, the host of its Raft address.
     */
    public synchronized Result add(String id, String raftAddress, String clientAddress, String identity) {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<String> steps = new ArrayList<>();
        checkId(id);
        checkHostPort("raft-address", raftAddress);
        checkHostPort("client-address", clientAddress);
        if (identity != null && !identity.isEmpty() && !identity.matches("(dns|ip|uri):.+")) {
            throw refused("invalid identity '" + identity + "': dns:<name>, ip:<address> or uri:<uri>");
        }
        View before = view(deadline);
        if (before.member(id) != null) {
            throw refused("node " + id + " is already a member (" + before.member(id).role() + ")");
        }
        if (stateMachine.rosterHas(id) || stateMachine.rosterRemoved(id)) {
            throw refused("id " + id + " was a member of this cluster before (it " + (stateMachine.rosterRemoved(id)
                    ? "was removed" : "stored the log") + "): a node never comes back under a former member's id. "
                    + "Start the new node with a new leasehold.cluster.node-id and add that "
                    + "(docs/cluster.md, \"Replacing a lost node\")");
        }
        Conf conf = stableConf(deadline);
        List<RaftPeer> voters = conf.voters();
        List<RaftPeer> listeners = conf.listeners();
        RaftPeer listener = RaftPeer.newBuilder().setId(id).setAddress(raftAddress)
                .setStartupRole(RaftPeerRole.LISTENER).build();

        propose(Roster.addressesEntry(id, raftAddress, clientAddress, identity), before.leader(), deadline, false);
        steps.add(step("recorded its addresses", start));
        // This node dials the new one next: with cluster TLS it must accept its certificate first.
        while (!stateMachine.directory().containsKey(id)) {
            if (System.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "the addresses of " + id
                        + " did not reach this node in time; the configuration was not changed", false);
            }
            pause();
        }
        node.admitAddedMembers();

        // Probe: the new node creates the group (formats its empty storage) or the change stops here.
        List<RaftPeer> all = new ArrayList<>(voters);
        all.addAll(listeners);
        all.add(listener);
        RaftGroup group = RaftGroup.valueOf(ClusterNode.GROUP_ID, all);
        try (RaftClient c = client(group, null, rpcMillis)) {
            RaftClientReply r = c.getGroupManagementApi(listener.getId()).add(group, true);
            if (!r.isSuccess()) {
                throw refused("node " + id + " at " + raftAddress + " refused to join: " + r.getException()
                        + " (is it a new node started with leasehold.cluster.join=true on an empty data directory?)");
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof MembershipException m) {
                throw m;
            }
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "node " + id + " at " + raftAddress
                    + " did not answer within " + rpcMillis + " ms (" + rootMessage(e) + "): nothing was changed "
                    + "(the configuration is as before). "
                    + "Start it with leasehold.cluster.join=true, check that members can reach its Raft port, and "
                    + "add it again", false);
        }
        steps.add(step("probed " + id + " at " + raftAddress + " (its storage is formatted)", start));

        List<RaftPeer> withListener = new ArrayList<>(listeners);
        withListener.add(listener);
        setConfiguration(before.leader(), voters, listeners, voters, withListener, deadline, false);
        steps.add(step("added as a listener", start));

        View caught = awaitCaughtUp(id, deadline);
        steps.add(step("caught up to index " + caught.commitIndex(), start));

        // This node's copy of the configuration must show the listener before compare-and-set.
        Conf listening = awaitConf(c -> c.has(id, true), "the listener " + id, deadline);
        RaftPeer voter = RaftPeer.newBuilder().setId(id).setAddress(raftAddress)
                .setStartupRole(RaftPeerRole.FOLLOWER).build();
        List<RaftPeer> newVoters = new ArrayList<>(listening.voters());
        newVoters.add(voter);
        List<RaftPeer> otherListeners = new ArrayList<>(listening.listeners());
        otherListeners.removeIf(p -> p.getId().toString().equals(id));
        setConfiguration(caught.leader(), listening.voters(), listening.listeners(), newVoters, otherListeners,
                deadline, true);
        steps.add(step("promoted to voter", start));
        return done("add " + id, start, steps, deadline);
    }

    /** Removes {@code id}; a leader hands leadership over first. */
    public synchronized Result remove(String id) {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<String> steps = new ArrayList<>();
        checkId(id);
        View before = view(deadline);
        Member m = before.member(id);
        if (m == null) {
            throw refused("node " + id + " is not a member (members: " + ids(before) + ")");
        }
        boolean voter = !m.role().equals(LISTENER);
        long votersBefore = before.voters();
        if (voter && votersBefore - 1 < votersBefore / 2 + 1) {
            throw refused("removing " + id + " would leave " + (votersBefore - 1) + " voter(s), fewer than a majority ("
                    + (votersBefore / 2 + 1) + ") of the " + votersBefore + " voters now; add a member first");
        }
        if (id.equals(before.leader())) {
            String target = handoverTarget(before, id);
            try (RaftClient c = client(groupOf(before), RaftPeerId.valueOf(id), rpcMillis * 2)) {
                RaftClientReply r = c.admin().transferLeadership(RaftPeerId.valueOf(target), rpcMillis * 2);
                if (!r.isSuccess()) {
                    throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "leader " + id
                            + " could not hand leadership to " + target + ": " + r.getException()
                            + "; nothing was changed, try again", false);
                }
            } catch (IOException e) {
                throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "leader " + id
                        + " could not hand leadership to " + target + ": " + rootMessage(e)
                        + "; nothing was changed, try again", false);
            }
            steps.add(step("leadership handed from " + id + " to " + target, start));
            before = awaitLeaderOtherThan(id, deadline);
        }
        Conf conf = stableConf(deadline);
        List<RaftPeer> voters = conf.voters();
        List<RaftPeer> listeners = conf.listeners();
        List<RaftPeer> newVoters = new ArrayList<>(voters);
        List<RaftPeer> newListeners = new ArrayList<>(listeners);
        newVoters.removeIf(p -> p.getId().toString().equals(id));
        newListeners.removeIf(p -> p.getId().toString().equals(id));
        setConfiguration(before.leader(), voters, listeners, newVoters, newListeners, deadline, false);
        steps.add(step("configuration without " + id + " committed", start));
        propose(Roster.removedEntry(id), before.leader(), deadline, true);
        steps.add(step("recorded " + id + " as removed (it can never rejoin under that id)", start));
        return done("remove " + id, start, steps, deadline);
    }

    /** Removes {@code oldId} (its disk is lost, or it is gone), then adds {@code newId} in its place. */
    public synchronized Result replace(String oldId, String newId, String raftAddress, String clientAddress) {
        return replace(oldId, newId, raftAddress, clientAddress, null);
    }

    /** As {@link #replace(String, String, String, String)}, naming the new node's certificate identity. */
    public synchronized Result replace(String oldId, String newId, String raftAddress, String clientAddress,
            String identity) {
        long start = System.nanoTime();
        checkId(oldId);
        checkId(newId);
        if (oldId.equals(newId)) {
            throw refused("the new incarnation needs a new id: " + newId + " is the id being replaced");
        }
        checkHostPort("raft-address", raftAddress);
        checkHostPort("client-address", clientAddress);
        Result removed = remove(oldId);
        Result added;
        try {
            added = add(newId, raftAddress, clientAddress, identity);
        } catch (MembershipException e) {
            throw new MembershipException(e.kind(), oldId + " was removed, but adding " + newId + " failed: "
                    + e.getMessage() + ". Fix that and run: leasehold cluster add " + newId + " --raft-address "
                    + raftAddress + " --client-address " + clientAddress, true);
        }
        List<String> steps = new ArrayList<>(removed.steps());
        steps.addAll(added.steps());
        return new Result("replace " + oldId + " by " + newId, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                steps, added.after());
    }

    // ------------------------------------------------------------------ steps

    private Result done(String change, long start, List<String> steps, long deadline) {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        View after = view(deadline);
        LOG.info("Membership change '{}' done in {} ms: {}; members now {}", change, ms, steps, ids(after));
        return new Result(change, ms, steps, after);
    }

    private static String step(String what, long start) {
        return what + " (" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms)";
    }

    private void setConfiguration(String leader, List<RaftPeer> voters, List<RaftPeer> listeners,
            List<RaftPeer> newVoters, List<RaftPeer> newListeners, long deadline, boolean partial) {
        SetConfigurationRequest.Arguments args = SetConfigurationRequest.Arguments.newBuilder()
                .setServersInCurrentConf(voters).setListenersInCurrentConf(listeners)
                .setServersInNewConf(newVoters).setListenersInNewConf(newListeners)
                .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET).build();
        List<RaftPeer> everyone = new ArrayList<>(voters);
        everyone.addAll(listeners);
        for (RaftPeer p : newVoters) {
            if (everyone.stream().noneMatch(q -> q.getId().equals(p.getId()))) {
                everyone.add(p);
            }
        }
        long left = remainingMillis(deadline);
        try (RaftClient c = clientUntil(RaftGroup.valueOf(ClusterNode.GROUP_ID, everyone), RaftPeerId.valueOf(leader),
                deadline)) {
            RaftClientReply r = c.admin().setConfiguration(args);
            if (!r.isSuccess()) {
                String why = String.valueOf(r.getException());
                boolean conflict = why.contains("SetConfigurationException") && why.toLowerCase().contains("current");
                if (conflict && isNow(newVoters, newListeners)) {
                    return; // a resent request whose first attempt committed on a leader that then changed
                }
                throw new MembershipException(conflict ? MembershipException.Kind.CONFLICT
                        : MembershipException.Kind.UNAVAILABLE, (conflict
                        ? "the configuration changed while this change was prepared (another change committed): "
                        : "the configuration change was not committed: ") + why + partialNote(partial), partial);
            }
        } catch (IOException e) {
            throw new MembershipException(MembershipException.Kind.TIMEOUT, "the configuration change was not "
                    + "confirmed within " + left + " ms (" + rootMessage(e) + "); run leasehold cluster members "
                    + "to see whether it committed" + partialNote(partial), partial);
        }
    }

    /** Whether this node's configuration is already exactly the one asked for. */
    private boolean isNow(List<RaftPeer> voters, List<RaftPeer> listeners) {
        Conf c = localConf();
        return !c.changing() && sameIds(c.voters(), voters) && sameIds(c.listeners(), listeners);
    }

    private static boolean sameIds(List<RaftPeer> a, List<RaftPeer> b) {
        return a.stream().map(p -> p.getId().toString()).collect(java.util.stream.Collectors.toSet())
                .equals(b.stream().map(p -> p.getId().toString()).collect(java.util.stream.Collectors.toSet()));
    }

    private static String partialNote(boolean partial) {
        return partial ? " (earlier steps of this change did commit: see leasehold cluster members)" : "";
    }

    /** A roster entry, proposed through the leader like any write; waits for its commit. */
    private void propose(byte[] entry, String leader, long deadline, boolean partial) {
        View v = view(deadline);
        try (RaftClient c = clientUntil(groupOf(v), RaftPeerId.valueOf(leader), deadline)) {
            RaftClientReply r = c.io().send(Message.valueOf(UnsafeByteOperations.unsafeWrap(entry)));
            if (!r.isSuccess()) {
                throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "the roster entry was not "
                        + "committed: " + r.getException() + partialNote(partial), partial);
            }
        } catch (IOException e) {
            throw new MembershipException(MembershipException.Kind.TIMEOUT, "the roster entry was not committed: "
                    + rootMessage(e) + partialNote(partial), partial);
        }
    }

    /** Waits until listener {@code id} reports a commit index at least the leader's at the start of the wait. */
    private View awaitCaughtUp(String id, long deadline) {
        long target = view(deadline).commitIndex();
        while (true) {
            View v = view(deadline);
            Member m = v.member(id);
            if (m != null && m.commitIndex() >= target) {
                return v;
            }
            if (System.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "node " + id + " was added as a "
                        + "listener but did not catch up to index " + target + " within " + timeoutMillis + " ms (at "
                        + (m == null ? "?" : m.commitIndex()) + "); it stays a listener (no vote). Remove it with "
                        + "leasehold cluster remove " + id + ", or wait and add it again", true);
            }
            pause();
        }
    }

    private View awaitLeaderOtherThan(String id, long deadline) {
        while (true) {
            try {
                View v = view(deadline);
                if (!v.leader().equals(id)) {
                    return v;
                }
            } catch (MembershipException e) {
                if (e.kind() == MembershipException.Kind.TIMEOUT) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "no new leader after the handover "
                        + "from " + id + "; nothing was removed", false);
            }
            pause();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(100); // an admin thread polling another node's progress: real time must pass
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MembershipException(MembershipException.Kind.TIMEOUT, "interrupted", false);
        }
    }

    /** The leader's view, asked of the leader (retried until one answers or the deadline passes). */
    private View view(long deadline) {
        String lastError = "no leader known";
        while (true) {
            RaftPeerId leader = node.knownLeader();
            if (leader != null) {
                try {
                    GroupInfoReply info = groupInfo(leader.toString(), deadline);
                    RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
                    if (info.isSuccess() && role != null && role.getRole() == RaftPeerRole.LEADER) {
                        return toView(leader.toString(), info);
                    }
                    lastError = leader + " is not leader (" + (role == null ? "?" : role.getRole()) + ")";
                } catch (MembershipException e) {
                    lastError = e.getMessage();
                }
            }
            if (System.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "no leader answered: " + lastError
                        + "; try again once the cluster has a leader", false);
            }
            pause();
        }
    }

    private GroupInfoReply groupInfo(String peer, long deadline) {
        RaftServer.Division local = node.localDivision();
        List<RaftPeer> peers = new ArrayList<>(local == null ? List.of() : local.getRaftConf().getAllPeers());
        if (peers.isEmpty()) {
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "this node (" + node.settings().nodeId()
                    + ") is not a member yet; run the command on a member", false);
        }
        try (RaftClient c = client(RaftGroup.valueOf(ClusterNode.GROUP_ID, peers), null,
                Math.min(rpcMillis, Math.max(500, remainingMillis(deadline))))) {
            return c.getGroupManagementApi(RaftPeerId.valueOf(peer)).info(ClusterNode.GROUP_ID);
        } catch (IOException | RuntimeException e) {
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "cannot reach " + peer + ": "
                    + rootMessage(e), false);
        }
    }

    private View toView(String leader, GroupInfoReply info) {
        Conf conf = localConf();
        Map<String, Long> commits = new HashMap<>();
        info.getCommitInfos().forEach(c -> commits.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex()));
        Map<String, Long> contact = new HashMap<>();
        RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasLeaderInfo()) {
            role.getLeaderInfo().getFollowerInfoList().forEach(f -> contact.put(f.getId().getId().toStringUtf8(),
                    f.getLastRpcElapsedTimeMs()));
        }
        Map<String, Long> matches = leader.equals(node.settings().nodeId()) ? localMatchIndexes() : Map.of();
        List<Member> members = new ArrayList<>();
        for (boolean listeners : new boolean[] {false, true}) {
            for (RaftPeer p : listeners ? conf.listeners() : conf.voters()) {
                String id = p.getId().toString();
                String r = id.equals(leader) ? LEADER : listeners ? LISTENER : VOTER;
                Member m = new Member(id, r, p.getAddress(), node.clientAddress(id).orElse(""),
                        commits.getOrDefault(id, -1L), matches.getOrDefault(id, -1L),
                        id.equals(leader) ? 0 : contact.getOrDefault(id, -1L));
                if (r.equals(LEADER)) {
                    members.add(0, m);
                } else {
                    members.add(m);
                }
            }
        }
        return new View(leader, role.getLeaderInfo().getTerm(), commits.getOrDefault(leader, -1L), members);
    }

    /**
     * Each follower's match index, when this node leads. Ratis gives the indexes as an array in the
     * order of the role info's followers, in two calls: a change between them shows as different
     * lengths, and then nothing is reported rather than an index under the wrong id.
     */
    private Map<String, Long> localMatchIndexes() {
        RaftServer.Division d = node.localDivision();
        if (d == null || !d.getInfo().isLeader()) {
            return Map.of(); // the role info of a division without a role yet cannot be built
        }
        RaftProtos.RoleInfoProto role = d.getInfo().getRoleInfoProto();
        long[] match = d.getInfo().getFollowerMatchIndices();
        if (match == null || !role.hasLeaderInfo() || role.getLeaderInfo().getFollowerInfoCount() != match.length) {
            return Map.of();
        }
        Map<String, Long> out = new HashMap<>();
        for (int i = 0; i < match.length; i++) {
            out.put(role.getLeaderInfo().getFollowerInfo(i).getId().getId().toStringUtf8(), match[i]);
        }
        return out;
    }

    /** A configuration as this node holds it: the exact peers, for compare-and-set. */
    record Conf(List<RaftPeer> voters, List<RaftPeer> listeners, boolean changing) {

        boolean has(String id, boolean asListener) {
            return (asListener ? listeners : voters).stream().anyMatch(p -> p.getId().toString().equals(id));
        }
    }

    /**
     * This node's configuration (a member adopts a configuration entry when it appends it, so
     * this is the leader's, or one a heartbeat behind: a stale one fails compare-and-set, never
     * applies).
     */
    private Conf localConf() {
        RaftServer.Division d = node.localDivision();
        if (d == null) {
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "this node (" + node.settings().nodeId()
                    + ") is not a member yet; run the command on a member", false);
        }
        var c = d.getRaftConf();
        return new Conf(new ArrayList<>(c.getCurrentPeers(RaftPeerRole.FOLLOWER)),
                new ArrayList<>(c.getCurrentPeers(RaftPeerRole.LISTENER)), !c.getPreviousPeers().isEmpty());
    }

    /** The configuration once no change is in progress (joint consensus finished). */
    private Conf stableConf(long deadline) {
        return awaitConf(c -> !c.changing(), "the end of the configuration change in progress", deadline);
    }

    private Conf awaitConf(java.util.function.Predicate<Conf> ready, String what, long deadline) {
        while (true) {
            Conf c = localConf();
            if (ready.test(c) && !c.changing()) {
                return c;
            }
            if (System.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "this node's configuration did not "
                        + "show " + what + " within " + timeoutMillis + " ms; run leasehold cluster members", true);
            }
            pause();
        }
    }

    private static RaftGroup groupOf(View v) {
        List<RaftPeer> peers = new ArrayList<>();
        for (Member m : v.members()) {
            peers.add(RaftPeer.newBuilder().setId(m.id()).setAddress(m.raftAddress()).build());
        }
        return RaftGroup.valueOf(ClusterNode.GROUP_ID, peers);
    }

    /** The voter to hand leadership to: the one with the highest commit index, other than {@code leaving}. */
    private static String handoverTarget(View v, String leaving) {
        Member best = null;
        for (Member m : v.members()) {
            if (!m.id().equals(leaving) && !m.role().equals(LISTENER)
                    && (best == null || m.commitIndex() > best.commitIndex())) {
                best = m;
            }
        }
        if (best == null) {
            throw refused("no other voter to hand leadership to");
        }
        return best.id();
    }

    private RaftClient client(RaftGroup group, RaftPeerId leader, long timeoutMs) {
        return client(group, leader, timeoutMs, RetryPolicies.noRetry());
    }

    /** A client that resends while the leader is changing, up to {@code deadline}. */
    private RaftClient clientUntil(RaftGroup group, RaftPeerId leader, long deadline) {
        return client(group, leader, remainingMillis(deadline), new LeaderChangeRetry(deadline, System::nanoTime));
    }

    private RaftClient client(RaftGroup group, RaftPeerId leader, long timeoutMs, RetryPolicy retry) {
        RaftProperties p = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(Math.max(500, timeoutMs), TimeUnit.MILLISECONDS));
        RaftClient.Builder b = RaftClient.newBuilder().setProperties(p).setRaftGroup(group)
                .setParameters(clientParameters).setClientId(ClientId.randomId()).setRetryPolicy(retry);
        return (leader == null ? b : b.setLeaderId(leader)).build();
    }

    private static long remainingMillis(long deadline) {
        return Math.max(500, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    private static String ids(View v) {
        List<String> out = new ArrayList<>();
        v.members().forEach(m -> out.add(m.id() + " " + m.role()));
        return String.join(", ", out);
    }

    private static void checkId(String id) {
        if (id == null || !id.matches("[A-Za-z0-9_-]{1,64}")) {
            throw refused("invalid node id '" + id + "': 1-64 letters, digits, '-' or '_'");
        }
    }

    private static void checkHostPort(String what, String hostPort) {
        int colon = hostPort == null ? -1 : hostPort.lastIndexOf(':');
        boolean ok = colon > 0;
        if (ok) {
            try {
                int port = Integer.parseInt(hostPort.substring(colon + 1));
                ok = port > 0 && port < 65536;
            } catch (NumberFormatException e) {
                ok = false;
            }
        }
        if (!ok) {
            throw refused("invalid " + what + " '" + hostPort + "': must be host:port");
        }
    }

    private static MembershipException refused(String message) {
        return new MembershipException(MembershipException.Kind.REFUSED, message, false);
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
