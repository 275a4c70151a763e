package dev.leasehold.registry;

/**
 * One shared slot of a key (PROTOCOL.md section 13): an active shared grant with its own token
 * and lease, or, after its lease ran out with lock-delay on, a slot held with no active token
 * until {@link #delayEndNanos}. Linked in place into its key's list of slots and into its lane's
 * timer wheel (the lease end, then the delay end). Guarded by the lane lock.
 */
final class SharedGrant extends TimerNode {

    final KeyState state;
    /** The active grant's token; 0 once its lease ran out (then {@link #delayedToken} is set). */
    long token;
    SessionHandle.Peer holder = SessionHandle.Peer.UNKNOWN;
    long grantNanos;
    long leaseEndNanos;
    int maxLeaseSeconds;
    /** In lock-delay: the token whose lease expired; else 0. */
    long delayedToken;
    long delayEndNanos;

    SharedGrant prev;
    SharedGrant next;

    SharedGrant(KeyState state, long token, long now, int leaseSeconds, long leaseNanos) {
        this.state = state;
        this.token = token;
        this.grantNanos = now;
        this.leaseEndNanos = now + leaseNanos;
        this.maxLeaseSeconds = leaseSeconds;
    }

    boolean isActive() {
        return token != 0;
    }

    boolean leaseOver(long now) {
        return now - leaseEndNanos >= 0;
    }

    /** The instant its timer should fire next. */
    long nextEventNanos() {
        return isActive() ? leaseEndNanos : delayEndNanos;
    }
}
