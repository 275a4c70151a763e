package dev.leasehold.client;

/**
 * Hears a {@link Campaign}: its own terms, and (as a {@link LeaderListener}) every leader. Called one
 * at a time, in order, on a client delivery thread; {@link #onStartedLeading} may run long work
 * only if it watches {@link Leadership#isValid()}, since {@link #onStoppedLeading} is delivered after
 * it returns.
 */
public interface CampaignListener extends LeaderListener {

    /**
     * This candidate leads: at most once per term. Act as leader only while
     * {@link Leadership#isValid()}, and pass {@link Leadership#term()} to the resources you guard.
     */
    void onStartedLeading(Leadership leadership);

    /**
     * This candidate's term ended, once per started term: {@code leadership} was no longer valid
     * before this call (a lost lease is reported before the ticket's validity passes, by
     * {@link ElectionOptions#safety()}, when the client's timer runs on time).
     */
    void onStoppedLeading(Leadership leadership, StopReason reason);

    /**
     * An attempt to queue failed, and the campaign tries again after a jittered back-off: Busy
     * (the key's queue or the server is full), Unavailable (no server answered, or the client
     * would not send it: an identity longer than the server's {@code max-value-bytes}),
     * Indeterminate, or Forbidden (the server's ACL refuses the key). By default nothing; log it,
     * since a campaign that keeps failing never leads.
     */
    default void onAttemptFailed(AcquireOutcome outcome) {
    }

    /** Other terms: by default nothing, a candidate hears its own terms through {@link #onStartedLeading}. */
    @Override
    default void onNewLeader(long term, String identity) {
    }
}
