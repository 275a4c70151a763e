package dev.leasehold.cluster;

import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.NanoClock;

/**
 * Whether this node was removed from the cluster ({@code leasehold cluster remove}), and the
 * members a leader hint may name (PROTOCOL.md section 10, "A removed node").
 *
 * <h2>Why the node must ask</h2>
 * A removed node never sees its removal in its own log: Ratis stops replicating to a peer as soon
 * as it appends the configuration without it, and the roster's record of the removal commits
 * after that. What the node does see is the joint configuration of the change, in which it is
 * only an old member. So a node decides it was removed when one of these holds:
 * <ul>
 * <li>its roster records the removal (it applied the entry: a copy from a snapshot, say);</li>
 * <li>its configuration is a joint one that has it among the old members and not among the new,
 *     and the entry of that configuration is committed in its own log (a committed joint
 *     configuration always completes);</li>
 * <li>the group answers "removed" when asked ({@link RosterKeeper#askRemoved}): asked every
 *     {@link #ASK_EVERY_MILLIS} while its configuration leaves it out, or while it knows no
 *     leader (a node that was down when it was removed, restarted).</li>
 * </ul>
 * A configuration that merely leaves the node out proves nothing by itself: a member added online
 * replays the cluster's older configurations, none of which names it, while it catches up. So
 * that case only makes the node ask. Each rule reads committed state, so a removal that failed
 * (a leader lost before the joint configuration committed) is never taken for one. The state is
 * not persisted: a restarted removed node decides again from its log, its roster and the group.
 *
 * <p>Roles thread only, except {@link #reason()} and {@link #members()}.
 */
final class Removal {

    private static final Logger LOG = LoggerFactory.getLogger(Removal.class);

    /** The {@code X 8} and {@code X 9} message of a removed node (PROTOCOL.md section 10): no leader named. */
    static final String NOT_A_MEMBER = "removed: not a member of this cluster";
    /** How often a node that may have been removed asks the group. */
    static final long ASK_EVERY_MILLIS = 2_000;

    /** What a node's own Raft configuration says about it. */
    enum Seen {
        /** It is a voter or listener of the current configuration. */
        MEMBER,
        /** A joint configuration has it among the old members only: it is being removed. */
        LEAVING,
        /**
         * The configuration does not name it at all: an older configuration replayed while it
         * catches up after being added, or one appended after its removal. Only the group can tell.
         */
        OUTSIDE
    }

    private final String selfId;
    private final NanoClock clock;
    private final Consumer<Runnable> later;
    private final Consumer<String> onRemoved;

    /** Why this node knows it was removed; null while it is a member. */
    private volatile String reason;
    /** Voters of the current configuration not recorded as removed: what a leader hint may name. */
    private volatile Set<String> members = Set.of();
    private long nextAskNanos;
    private boolean asking;

    /**
     * @param later runs a task on the roles thread (the group's answer is handled there)
     * @param onRemoved runs once, on the roles thread, when this node learns it was removed (with why)
     */
    Removal(String selfId, NanoClock clock, Consumer<Runnable> later, Consumer<String> onRemoved) {
        this.selfId = selfId;
        this.clock = clock;
        this.later = later;
        this.onRemoved = onRemoved;
    }

    /** What {@code conf} says about {@code selfId}. */
    static Seen seen(RaftConfiguration conf, String selfId) {
        if (ids(conf.getCurrentPeers(RaftPeerRole.FOLLOWER)).contains(selfId)
                || ids(conf.getCurrentPeers(RaftPeerRole.LISTENER)).contains(selfId)) {
            return Seen.MEMBER;
        }
        boolean old = ids(conf.getPreviousPeers(RaftPeerRole.FOLLOWER)).contains(selfId)
                || ids(conf.getPreviousPeers(RaftPeerRole.LISTENER)).contains(selfId);
        return old ? Seen.LEAVING : Seen.OUTSIDE;
    }

    /** Why this node knows it was removed, or null while it is a member (any thread). */
    String reason() {
        return reason;
    }

    /** The ids a leader hint may name: current voters not recorded as removed (any thread). */
    Set<String> members() {
        return members;
    }

    /**
     * The {@code X 8} and {@code X 9} message (any thread): {@link #NOT_A_MEMBER} once removed
     * (definitive, no leader to chase: PROTOCOL.md 10); else {@code leader=host:port} for a
     * current voter other than this node (the node that answers is never named), or empty.
     *
     * @param leader the leader this node knows of, or null
     * @param clientAddress a member's protocol address
     */
    String hint(String leader, Function<String, Optional<String>> clientAddress) {
        if (reason != null) {
            return NOT_A_MEMBER;
        }
        Set<String> m = members; // empty while this node has no configuration: nothing to filter by
        if (leader == null || leader.equals(selfId) || !m.isEmpty() && !m.contains(leader)) {
            return "";
        }
        return clientAddress.apply(leader).map(a -> "leader=" + a).orElse("");
    }

    /**
     * One check, a few times a second on the roles thread.
     *
     * @param conf the local configuration (null while the node has no group)
     * @param committedIndex the local log's commit index
     * @param removedIds the ids the local roster records as removed
     * @param leaderKnown whether this node knows a leader
     * @param ask asks the group whether this node was removed ({@link RosterKeeper#askRemoved})
     */
    void check(RaftConfiguration conf, long committedIndex, Set<String> removedIds, boolean leaderKnown,
            Supplier<CompletableFuture<Boolean>> ask) {
        if (conf != null) {
            Set<String> m = ids(conf.getCurrentPeers(RaftPeerRole.FOLLOWER));
            m.removeAll(removedIds);
            members = Set.copyOf(m);
        }
        if (reason != null) {
            return;
        }
        if (removedIds.contains(selfId)) {
            removed("its roster records the removal");
            return;
        }
        Seen seen = conf == null ? Seen.MEMBER : seen(conf, selfId);
        if (seen == Seen.LEAVING && committedIndex >= conf.getLogEntryIndex()) {
            removed("the committed configuration change to " + ids(conf.getCurrentPeers(RaftPeerRole.FOLLOWER))
                    + " leaves it out");
            return;
        }
        boolean doubtful = conf != null && (seen != Seen.MEMBER || !leaderKnown);
        long now = clock.nanoTime();
        if (doubtful && !asking && now - nextAskNanos >= 0) {
            asking = true;
            nextAskNanos = now + TimeUnit.MILLISECONDS.toNanos(ASK_EVERY_MILLIS);
            ask.get().whenComplete((answer, e) -> later.accept(() -> {
                asking = false;
                if (Boolean.TRUE.equals(answer) && reason == null) {
                    removed("the cluster's leader answers that its removal committed");
                }
            }));
        }
    }

    private void removed(String why) {
        reason = why;
        LOG.error("Node {} was removed from the cluster (leasehold cluster remove; {}): it counts for no majority, "
                + "serves no lock and names no leader; it answers every lock request with X 8 \"{}\". Stop it and delete its data "
                + "directory; it can never rejoin under id {} (add a new node under a new id instead)",
                selfId, why, NOT_A_MEMBER, selfId);
        onRemoved.accept(why);
    }

    private static Set<String> ids(Collection<RaftPeer> peers) {
        Set<String> ids = new TreeSet<>();
        for (RaftPeer p : peers) {
            ids.add(p.getId().toString());
        }
        return ids;
    }
}
