package dev.leasehold.cluster;

import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.util.LifeCycle;

/**
 * One read of the local Raft division for health, readiness and metrics, safe at every moment of
 * the division's life.
 *
 * <p>Ratis leaves values null while a division starts (its role is set only by the first
 * transition, after the constructor has returned), and a division that is closing or being
 * reinitialized may fail a read of state it is tearing down. A probe or a scrape at that moment
 * must see a state, not an exception: a division without a role yet reads {@value #STARTING}, a
 * closing or closed one {@value #STOPPED}, and a read that fails
 * {@value #UNKNOWN}. Indexes and the term read 0 where they cannot be read.
 *
 * @param role the Raft role's name ({@code LEADER}, {@code FOLLOWER}, {@code CANDIDATE},
 *        {@code LISTENER}) or one of this class's own states
 * @param term the current term, or 0
 * @param commitIndex the log's last committed index, or 0
 * @param appliedIndex the state machine's last applied index, or 0
 */
record DivisionReading(String role, long term, long commitIndex, long appliedIndex) {

    /** The division exists but has no role yet. */
    static final String STARTING = "STARTING";
    /** The division is closing or closed, or the Raft server is not running. */
    static final String STOPPED = "STOPPED";
    /** Reading the division failed (it is being torn down or reinitialized). */
    static final String UNKNOWN = "UNKNOWN";

    /** A node without a division at all: its role is {@code absent}, every number 0. */
    static DivisionReading absent(String absent) {
        return new DivisionReading(absent, 0, 0, 0);
    }

    /**
     * Reads {@code d}; never throws.
     *
     * @param d the division, or null when there is none
     * @param absent the role to report when {@code d} is null ({@value #STOPPED}, or
     *        {@code NO_STORAGE} before a formed group exists)
     */
    static DivisionReading of(RaftServer.Division d, String absent) {
        if (d == null) {
            return absent(absent);
        }
        try {
            DivisionInfo info = d.getInfo();
            if (info == null) {
                return absent(STARTING);
            }
            long term = info.getCurrentTerm();
            long applied = info.getLastAppliedIndex();
            RaftLog log = d.getRaftLog();
            long committed = log == null ? 0 : log.getLastCommittedIndex();
            return new DivisionReading(role(info), term, committed, applied);
        } catch (RuntimeException e) {
            return absent(UNKNOWN);
        }
    }

    private static String role(DivisionInfo info) {
        LifeCycle.State life = info.getLifeCycleState();
        if (life != null && life.isClosingOrClosed()) {
            return STOPPED;
        }
        RaftPeerRole role = info.getCurrentRole();
        if (role == null) {
            return STARTING;
        }
        return role.name();
    }

    /** Why a division in {@code role} cannot be counted on yet, or null (a Raft role, or none at all). */
    static String notYetRunning(String role) {
        return switch (role) {
            case STARTING -> "the Raft division is starting: no role yet";
            case UNKNOWN -> "the Raft division could not be read (closing or reinitializing)";
            default -> null;
        };
    }

    /** Whether the role is a Raft role (the division runs), not one of this class's own states. */
    static boolean isRaftRole(String role) {
        return switch (role) {
            case "LEADER", "FOLLOWER", "CANDIDATE", "LISTENER" -> true;
            default -> false;
        };
    }
}
