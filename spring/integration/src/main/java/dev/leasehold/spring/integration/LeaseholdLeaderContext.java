package dev.leasehold.spring.integration;

import java.util.Optional;

import org.springframework.integration.leader.Context;

import dev.leasehold.client.Leadership;

/**
 * The {@link Context} a {@link LeaseholdLeaderInitiator} hands its candidate: one per term (the
 * one {@code onGranted} and {@code onRevoked} receive, and {@link LeaseholdLeaderInitiator#getContext()}
 * returns while the candidate leads), or one without a term ({@code getContext()} otherwise).
 * Beyond Spring Integration's context it carries the term, the fencing token to pass to the
 * resources the leader writes to. Thread-safe; immutable but for the term's own state.
 */
public final class LeaseholdLeaderContext implements Context {

    private final String role;
    private final Leadership leadership;

    /** The context of term {@code leadership}. */
    LeaseholdLeaderContext(String role, Leadership leadership) {
        this.role = role;
        this.leadership = leadership;
    }

    /** A context without a term: not leading. */
    static LeaseholdLeaderContext notLeading(String role) {
        return new LeaseholdLeaderContext(role, null);
    }

    /**
     * True while this context's term lasts on the candidate's side ({@link Leadership#isValid()}):
     * false from the moment it is yielded, its lease is lost or its validity (minus the safety)
     * has passed, even before {@code onRevoked} is called. Always false without a term.
     */
    @Override
    public boolean isLeader() {
        return leadership != null && leadership.isValid();
    }

    /**
     * Ends this term and hands the role to the next candidate waiting on the server: {@code onRevoked}
     * runs (after {@code onGranted} returned), the grant is released, the next candidate is granted
     * one round trip later, and this candidate queues again at the tail. Never blocks; safe to call
     * from {@code onGranted}. Does nothing without a term or for a term already over.
     */
    @Override
    public void yield() {
        if (leadership != null) {
            leadership.resign();
        }
    }

    /** The candidate's role. */
    @Override
    public String getRole() {
        return role;
    }

    /**
     * The term: its grant's fencing token, higher than every earlier term of the role. Pass it with
     * every write the leader makes and let the resource refuse a term lower than the highest it
     * has seen (docs/election.md, "The promises").
     *
     * @throws IllegalStateException for a context without a term ({@link #leadership()} is empty)
     */
    public long term() {
        if (leadership == null) {
            throw new IllegalStateException("not leading: this context of role " + role + " has no term");
        }
        return leadership.term();
    }

    /** The term behind this context (validity, proclaim, resign), or empty for a context without one. */
    public Optional<Leadership> leadership() {
        return Optional.ofNullable(leadership);
    }

    @Override
    public String toString() {
        return "LeaseholdLeaderContext{role=" + role + (leadership == null ? ", no term"
                : ", term=" + leadership.term() + ", id=" + leadership.identity()) + ", isLeader=" + isLeader() + "}";
    }
}
