package dev.leasehold.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.NanoClock;

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

    /** What a change did: its steps with their times, and the members after it. */
    public record Result(String change, long millis, List<String> steps, MemberView after) {
    }

    /** The node it runs on, as its parts see it: not the node itself, so its other jobs stay out of reach. */
    private final RaftHost node;
    private final LockStateMachine stateMachine;
    /** Deadlines and step times; the polls between them sleep, since another node must progress. */
    private final NanoClock clock;
    private final long timeoutMillis;
    private final long rpcMillis;
    private final MemberViews views;

    Membership(RaftHost node, LockStateMachine stateMachine, Parameters clientParameters, NanoClock clock) {
        this.node = node;
        this.stateMachine = stateMachine;
        this.clock = clock;
        long electionMax = node.settings().electionTimeoutMax().toMillis();
        this.rpcMillis = Math.max(2_000, electionMax * 2);
        this.timeoutMillis = Math.max(30_000, electionMax * 20);
        this.views = new MemberViews(node, clientParameters, clock, rpcMillis, timeoutMillis);
    }

    /** The members, roles, commit indexes and last contact, as the leader reports them. */
    public synchronized MemberView members() {
        return views.view(clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rpcMillis * 3));
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
        long start = clock.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<String> steps = new ArrayList<>();
        MembershipRules.checkId(id);
        MembershipRules.checkHostPort("raft-address", raftAddress);
        MembershipRules.checkHostPort("client-address", clientAddress);
        MembershipRules.checkIdentity(identity);
        MemberView before = views.view(deadline);
        MembershipRules.checkAddable(before, id, stateMachine.rosterHas(id), stateMachine.rosterRemoved(id));
        MemberViews.Conf conf = views.stableConf(deadline);
        List<RaftPeer> voters = conf.voters();
        List<RaftPeer> listeners = conf.listeners();
        RaftPeer listener = RaftPeer.newBuilder().setId(id).setAddress(raftAddress)
                .setStartupRole(RaftPeerRole.LISTENER).build();

        propose(Roster.addressesEntry(id, raftAddress, clientAddress, identity), before.leader(), deadline, false);
        steps.add(step("recorded its addresses", start));
        // This node dials the new one next: with cluster TLS it must accept its certificate first.
        while (!stateMachine.directory().containsKey(id)) {
            if (clock.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "the addresses of " + id
                        + " did not reach this node in time; the configuration was not changed", false);
            }
            views.pause();
        }
        node.admitAddedMembers();

        // Probe: the new node creates the group (formats its empty storage) or the change stops here.
        List<RaftPeer> all = new ArrayList<>(voters);
        all.addAll(listeners);
        all.add(listener);
        RaftGroup group = RaftGroup.valueOf(RaftConfig.GROUP_ID, all);
        try (RaftClient c = views.client(group, null, rpcMillis)) {
            RaftClientReply r = c.getGroupManagementApi(listener.getId()).add(group, true);
            if (!r.isSuccess()) {
                throw MembershipRules.refused("node " + id + " at " + raftAddress + " refused to join: " + r.getException()
                        + " (is it a new node started with leasehold.cluster.join=true on an empty data directory?)");
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof MembershipException m) {
                throw m;
            }
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "node " + id + " at " + raftAddress
                    + " did not answer within " + rpcMillis + " ms (" + views.rootMessage(e) + "): nothing was changed "
                    + "(the configuration is as before). "
                    + "Start it with leasehold.cluster.join=true, check that members can reach its Raft port, and "
                    + "add it again", false);
        }
        steps.add(step("probed " + id + " at " + raftAddress + " (its storage is formatted)", start));

        List<RaftPeer> withListener = new ArrayList<>(listeners);
        withListener.add(listener);
        setConfiguration(before.leader(), voters, listeners, voters, withListener, deadline, false);
        steps.add(step("added as a listener", start));

        MemberView caught = awaitCaughtUp(id, deadline);
        steps.add(step("caught up to index " + caught.commitIndex(), start));

        // This node's copy of the configuration must show the listener before compare-and-set.
        MemberViews.Conf listening = views.awaitConf(c -> c.has(id, true), "the listener " + id, deadline);
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
        long start = clock.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        List<String> steps = new ArrayList<>();
        MembershipRules.checkId(id);
        MemberView before = views.view(deadline);
        MembershipRules.checkRemovable(before, id);
        if (id.equals(before.leader())) {
            String target = MembershipRules.handoverTarget(before, id);
            String failed = null;
            try (RaftClient c = views.client(views.groupOf(before), RaftPeerId.valueOf(id), rpcMillis * 2)) {
                RaftClientReply r = c.admin().transferLeadership(RaftPeerId.valueOf(target), rpcMillis * 2);
                if (!r.isSuccess()) {
                    failed = String.valueOf(r.getException());
                }
            } catch (IOException e) {
                failed = views.rootMessage(e);
            }
            if (failed == null) {
                steps.add(step("leadership handed from " + id + " to " + target, start));
                before = awaitLeaderOtherThan(id, deadline);
            } else {
                // An election can beat the handover (Ratis: DIFFERENT_LEADER). What the removal needs is
                // a leader other than id, however it came: go on with it; otherwise nothing changed.
                MemberView now = leaderOtherThanOrNull(id, deadline);
                if (now == null) {
                    throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "leader " + id
                            + " could not hand leadership to " + target + ": " + failed
                            + "; nothing was changed, try again", false);
                }
                steps.add(step("leadership moved from " + id + " to " + now.leader() + " by an election before the "
                        + "handover to " + target + " (" + failed + ")", start));
                before = now;
            }
        }
        MemberViews.Conf conf = views.stableConf(deadline);
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
        long start = clock.nanoTime();
        MembershipRules.checkReplacement(oldId, newId, raftAddress, clientAddress);
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
        return new Result("replace " + oldId + " by " + newId, TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start),
                steps, added.after());
    }

    // ------------------------------------------------------------------ steps

    private Result done(String change, long start, List<String> steps, long deadline) {
        long ms = TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start);
        MemberView after = views.view(deadline);
        LOG.info("Membership change '{}' done in {} ms: {}; members now {}", change, ms, steps, MembershipRules.ids(after));
        return new Result(change, ms, steps, after);
    }

    private String step(String what, long start) {
        return what + " (" + TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start) + " ms)";
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
        long left = views.remainingMillis(deadline);
        try (RaftClient c = views.clientUntil(RaftGroup.valueOf(RaftConfig.GROUP_ID, everyone), RaftPeerId.valueOf(leader),
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
                    + "confirmed within " + left + " ms (" + views.rootMessage(e) + "); run leasehold cluster members "
                    + "to see whether it committed" + partialNote(partial), partial);
        }
    }

    /** Whether this node's configuration is already exactly the one asked for. */
    private boolean isNow(List<RaftPeer> voters, List<RaftPeer> listeners) {
        MemberViews.Conf c = views.localConf();
        return !c.changing() && sameIds(c.voters(), voters) && sameIds(c.listeners(), listeners);
    }

    private static boolean sameIds(List<RaftPeer> a, List<RaftPeer> b) {
        return a.stream().map(p -> p.getId().toString()).collect(Collectors.toSet())
                .equals(b.stream().map(p -> p.getId().toString()).collect(Collectors.toSet()));
    }

    private static String partialNote(boolean partial) {
        return partial ? " (earlier steps of this change did commit: see leasehold cluster members)" : "";
    }

    /** A roster entry, proposed through the leader like any write; waits for its commit. */
    private void propose(byte[] entry, String leader, long deadline, boolean partial) {
        MemberView v = views.view(deadline);
        try (RaftClient c = views.clientUntil(views.groupOf(v), RaftPeerId.valueOf(leader), deadline)) {
            RaftClientReply r = c.io().send(Message.valueOf(UnsafeByteOperations.unsafeWrap(entry)));
            if (!r.isSuccess()) {
                throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "the roster entry was not "
                        + "committed: " + r.getException() + partialNote(partial), partial);
            }
        } catch (IOException e) {
            throw new MembershipException(MembershipException.Kind.TIMEOUT, "the roster entry was not committed: "
                    + views.rootMessage(e) + partialNote(partial), partial);
        }
    }

    /** Waits until listener {@code id} reports a commit index at least the leader's at the start of the wait. */
    private MemberView awaitCaughtUp(String id, long deadline) {
        long target = views.view(deadline).commitIndex();
        while (true) {
            MemberView v = views.view(deadline);
            MemberView.Member m = v.member(id);
            if (m != null && m.commitIndex() >= target) {
                return v;
            }
            if (clock.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "node " + id + " was added as a "
                        + "listener but did not catch up to index " + target + " within " + timeoutMillis + " ms (at "
                        + (m == null ? "?" : m.commitIndex()) + "); it stays a listener (no vote). Remove it with "
                        + "leasehold cluster remove " + id + ", or wait and add it again", true);
            }
            views.pause();
        }
    }

    /**
     * After a failed handover: a leader other than {@code id}, if one is confirmed within two RPC
     * timeouts ({@link #awaitLeaderOtherThan} on a shorter deadline); null if not.
     */
    private MemberView leaderOtherThanOrNull(String id, long deadline) {
        long shortDeadline = Math.min(deadline, clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(rpcMillis * 2L));
        try {
            return awaitLeaderOtherThan(id, shortDeadline);
        } catch (MembershipException e) {
            return null;
        }
    }

    private MemberView awaitLeaderOtherThan(String id, long deadline) {
        while (true) {
            try {
                MemberView v = views.view(deadline);
                if (!v.leader().equals(id)) {
                    return v;
                }
            } catch (MembershipException e) {
                if (e.kind() == MembershipException.Kind.TIMEOUT) {
                    throw e;
                }
            }
            if (clock.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "no new leader after the handover "
                        + "from " + id + "; nothing was removed", false);
            }
            views.pause();
        }
    }
}
