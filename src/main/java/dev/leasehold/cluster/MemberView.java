package dev.leasehold.cluster;

import java.util.List;

/**
 * The cluster's members as the leader reports them ({@code leasehold cluster members}): what a
 * membership change is decided on, checked against, and answers with. A file of its own because
 * the readers ({@code MemberViews}), the rules ({@code MembershipRules}) and the admin endpoint
 * all speak it, below the class that changes the members.
 *
 * @param leader the leader's id
 * @param term the leader's term
 * @param commitIndex the leader's commit index
 * @param members every voter and listener, the leader first
 */
public record MemberView(String leader, long term, long commitIndex, List<Member> members) {

    /** A member's part in the configuration. */
    public enum Role {
        /** The leader: a voter that this view was asked of. */
        LEADER,
        /** A voter that follows. */
        VOTER,
        /** A non-voting listener: it receives the log but never votes or counts for a majority. */
        LISTENER
    }

    /**
     * A member as the leader sees it.
     *
     * @param commitIndex the member's commit index, as it last reported it to the leader
     * @param matchIndex the highest log index the leader knows this member stores; Ratis keeps it
     *     inside the leader's process only, so it is known when the leader itself answers and
     *     {@code -1} otherwise (and for the leader itself: it stores the whole log)
     * @param lastContactMillis how long ago the leader last heard from it ({@code 0} for the leader)
     */
    public record Member(String id, Role role, String raftAddress, String clientAddress, long commitIndex,
            long matchIndex, long lastContactMillis) {
    }

    /** The member {@code id}, or null if it is none. */
    Member member(String id) {
        return members.stream().filter(m -> m.id().equals(id)).findFirst().orElse(null);
    }

    /** How many members vote (the leader included; listeners do not). */
    long voters() {
        return members.stream().filter(m -> m.role() != Role.LISTENER).count();
    }
}
