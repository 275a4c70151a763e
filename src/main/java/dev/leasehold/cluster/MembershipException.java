package dev.leasehold.cluster;

/**
 * Why a membership change ({@link Membership}) was refused or failed; nothing was changed unless
 * {@link #partial} says so.
 */
public final class MembershipException extends RuntimeException {
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
