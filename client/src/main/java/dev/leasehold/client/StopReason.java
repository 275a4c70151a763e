package dev.leasehold.client;

/** Why a term of a {@link Campaign} ended ({@link CampaignListener#onStoppedLeading}). */
public enum StopReason {
    /** {@link Leadership#resign()}: the lock is released and the next candidate leads. */
    RESIGNED,
    /**
     * The lease could not be kept alive (an Extend answered NotHeld, or none succeeded before the
     * validity minus the safety): another candidate may lead soon.
     */
    LEASE_LOST,
    /**
     * {@link Campaign#close()} ended the campaign while leading (the grant is released), or the
     * client was closed (its grant cannot be released and ends with its lease on the server).
     */
    CLOSED
}
