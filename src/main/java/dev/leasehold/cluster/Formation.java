package dev.leasehold.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The disk-loss guard (docs/cluster.md "When a disk is lost"): decides whether a node whose Raft
 * storage directory is empty may format it and vote, from what its peers report.
 *
 * <h2>Why</h2>
 * Raft is safe only if every node remembers what it acknowledged and whom it voted for. Ratis's
 * {@code RECOVER} formats an empty directory, so a node whose volume was lost would rejoin as a
 * voter with an empty log, and its vote could elect a leader that lacks committed grants (tokens
 * issued twice). An empty directory looks the same whether the cluster is brand new or the disk was
 * lost; only the peers can tell the two apart.
 *
 * <h2>The rule</h2>
 * <ul>
 * <li>Storage present: start as before; nothing to decide.</li>
 * <li>Storage empty: the node first runs Raft without the group (it casts no vote, it answers group
 * queries with "no such group") and probes each peer. A peer is {@link PeerState#EMPTY} (no group:
 * first start, or itself a node in this same situation), {@link PeerState#FORMING} (has the group
 * but nothing in its log yet: it just formatted), {@link PeerState#FORMED} (its log or snapshot
 * holds entries) or {@link PeerState#UNREACHABLE}.</li>
 * <li>If every peer has been seen EMPTY or FORMING at least once, no committed entry can exist
 * anywhere (a commit needs a majority, and a node with entries never reports EMPTY again): this
 * is the cluster's first formation, and the node formats ({@link Decision#BOOTSTRAP}).</li>
 * <li>If a peer is seen FORMED first, the group exists and has data. Whether this node may have
 * stored any of it is the group's {@link Roster} to say ({@link #needsRoster()}, then
 * {@link #roster}): never stored, as a founding member that started after the others had
 * formed, formats and joins ({@link Decision#BOOTSTRAP}); stored means its disk was lost,
 * {@link Decision#REFUSE}, for good, and the operator replaces the member.</li>
 * <li>Otherwise {@link Decision#WAIT}: keep probing (an unreachable peer may hold the data; no
 * leader may be there to answer for the roster).</li>
 * </ul>
 * Not thread-safe: one formation loop owns it.
 */
public final class Formation {

    /** What one peer reported. */
    public enum PeerState {
        /** No answer (down, partitioned, not started yet). */
        UNREACHABLE,
        /** Raft runs without the group: nothing stored. */
        EMPTY,
        /** The group exists but its log and snapshot are empty: it is being formed. */
        FORMING,
        /** The group has log entries or a snapshot: it holds data. */
        FORMED
    }

    /** What the node does with its empty storage. */
    public enum Decision {
        /** Keep probing. */
        WAIT,
        /** First formation: format the storage and join as a voter. */
        BOOTSTRAP,
        /** The cluster exists without this node's data: never vote or serve; the operator replaces it. */
        REFUSE
    }

    /**
     * Whether this node has Raft storage it may vote with: where the decision above leaves it
     * (health and metrics show it; the formation rounds and the periodic checks act on it).
     */
    public enum Storage {
        /** Storage present (or formatted at the first formation): an ordinary member. */
        FORMED,
        /** Empty storage; probing the peers before it may format. No vote, no log. */
        WAITING,
        /** Empty storage and the cluster exists: never votes or serves until replaced. */
        REFUSED
    }

    private final Set<String> peers;
    private final Set<String> seenUnformed = new LinkedHashSet<>();
    private final Map<String, PeerState> last = new LinkedHashMap<>();
    private String formedBy;
    private Roster.Answer rosterAnswer;
    private Decision decision;

    /** @param peers the other members' ids (this node excluded) */
    public Formation(Set<String> peers) {
        this.peers = Set.copyOf(peers);
        // A one-member group has nobody to ask: its data was only ever its own.
        this.decision = peers.isEmpty() ? Decision.BOOTSTRAP : Decision.WAIT;
    }

    /** Records one probe answer; returns the decision so far (BOOTSTRAP and REFUSE are final). */
    public Decision observe(String peer, PeerState state) {
        if (!peers.contains(peer)) {
            throw new IllegalArgumentException("not a peer: " + peer + " (peers " + peers + ")");
        }
        last.put(peer, state);
        if (decision != Decision.WAIT) {
            return decision;
        }
        switch (state) {
            case EMPTY, FORMING -> seenUnformed.add(peer);
            case FORMED -> formedBy = peer;
            case UNREACHABLE -> {
                // says nothing: it may hold the data
            }
        }
        if (formedBy == null && seenUnformed.containsAll(peers)) {
            decision = Decision.BOOTSTRAP;
        }
        return decision;
    }

    /** True while the decision waits for the roster's answer: a peer holds the formed cluster. */
    public boolean needsRoster() {
        return decision == Decision.WAIT && formedBy != null;
    }

    /** Records the group's answer about this node's id; returns the decision so far. */
    Decision roster(Roster.Answer answer) {
        rosterAnswer = answer;
        if (needsRoster()) {
            switch (answer) {
                case STORED -> decision = Decision.REFUSE;
                case NEVER_STORED -> decision = Decision.BOOTSTRAP;
                case UNKNOWN -> {
                    // no leader answered: ask again
                }
            }
        }
        return decision;
    }

    /** The roster's last answer, or null if it was never asked (for the log). */
    Roster.Answer rosterAnswer() {
        return rosterAnswer;
    }

    /** The decision so far. */
    public Decision decision() {
        return decision;
    }

    /** The peer that reported a formed group (why the roster was asked), or null. */
    public String formedBy() {
        return formedBy;
    }

    /** Each peer's last answer, for the log and health. */
    public Map<String, PeerState> lastSeen() {
        return Map.copyOf(last);
    }

    /**
     * True when {@code raftDir} holds Raft storage for the group: its {@code current/raft-meta}
     * exists (Ratis writes it when it formats). A directory without it is what Ratis itself treats
     * as not formatted.
     */
    public static boolean hasStorage(Path raftDir, String groupUuid) {
        Path meta = raftDir.resolve(groupUuid).resolve("current").resolve("raft-meta");
        return Files.isRegularFile(meta);
    }

    /** True when {@code raftDir} is missing or holds no file at all (used in the log message). */
    public static boolean isEmptyDir(Path raftDir) {
        if (!Files.isDirectory(raftDir)) {
            return true;
        }
        try (var s = Files.walk(raftDir)) {
            return s.noneMatch(Files::isRegularFile);
        } catch (IOException e) {
            return false;
        }
    }
}
