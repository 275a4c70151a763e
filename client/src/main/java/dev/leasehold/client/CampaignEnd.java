package dev.leasehold.client;

/**
 * What {@link Campaign#stop()} proved when the campaign ended: the candidate holds nothing
 * afterwards in every case but {@link Unproven}, whose grant (if any) ends with its lease.
 */
public sealed interface CampaignEnd permits CampaignEnd.Resigned, CampaignEnd.Withdrawn, CampaignEnd.Idle,
        CampaignEnd.Unproven {

    /**
     * The campaign was leading: its term ended and the grant was released.
     *
     * @param term the ended term
     * @param release the release's outcome (RELEASED, or NOT_HELD / EXPIRED when the lease had ended)
     */
    record Resigned(long term, ReleaseOutcome release) implements CampaignEnd {
    }

    /**
     * The campaign was waiting in the queue: its acquire was withdrawn and its answer proved that
     * nothing is held ({@link AcquireOutcome.Cancelled}, or another definitive refusal).
     *
     * @param outcome the acquire's outcome
     */
    record Withdrawn(AcquireOutcome outcome) implements CampaignEnd {
    }

    /** The campaign held nothing and had nothing queued (between attempts, or already stopped). */
    record Idle() implements CampaignEnd {
    }

    /**
     * No proof came in time (no answer within the response grace, a broken session): a grant, if
     * any, is released by the client when it can and ends with its lease at the latest.
     *
     * @param reason for logs
     */
    record Unproven(String reason) implements CampaignEnd {
    }
}
