package dev.leasehold.client;

import java.time.Duration;

/**
 * How a {@link Campaign} waits and leads (docs/election.md). Make one with {@link #defaults()}
 * and the {@code with} methods; every value is checked when set.
 *
 * @param leaseSeconds the lease of each term's grant, 1 to 255 (15 by default): a crashed
 *        leader's term ends on the server at most this long after its last Extend
 * @param campaignWait how long one queued acquire waits before it is sent again (60 s by
 *        default; at most the server's {@code leasehold.max-wait}): the candidate stays in the
 *        key's queue across these waits, so it does not poll
 * @param safety how long before the ticket's validity a term ends on the candidate's side (a
 *        tenth of the lease by default): room for the leader's last step to finish in time
 * @param backoffMin the first pause after a Busy, Unavailable or Indeterminate attempt (100 ms),
 *        doubled after each such attempt
 * @param backoffMax the longest such pause (5 s); each pause is jittered by up to half of it
 */
public record ElectionOptions(int leaseSeconds, Duration campaignWait, Duration safety, Duration backoffMin,
        Duration backoffMax) {

    /** Checks every value. */
    public ElectionOptions {
        Arguments.leaseSeconds(leaseSeconds);
        Arguments.waitMillis(campaignWait);
        if (campaignWait.isZero()) {
            throw new IllegalArgumentException("campaignWait must be positive: a candidate waits in the queue");
        }
        if (Arguments.notNull(safety, "safety").isNegative() || safety.toSeconds() >= leaseSeconds) {
            throw new IllegalArgumentException("safety must be at least 0 and shorter than the lease, was " + safety);
        }
        Arguments.positive(backoffMin);
        if (Arguments.positive(backoffMax) < backoffMin.toNanos()) {
            throw new IllegalArgumentException("backoffMax must not be shorter than backoffMin");
        }
    }

    /** A lease of 15 s, waits of 60 s, a safety of 1.5 s, back-off from 100 ms to 5 s. */
    public static ElectionOptions defaults() {
        return new ElectionOptions(15, Duration.ofSeconds(60), Duration.ofMillis(1500), Duration.ofMillis(100),
                Duration.ofSeconds(5));
    }

    /** These options with another lease, and the safety a tenth of it. */
    public ElectionOptions withLeaseSeconds(int seconds) {
        return new ElectionOptions(seconds, campaignWait, Duration.ofMillis(seconds * 100L), backoffMin, backoffMax);
    }

    /** These options with another wait per queued acquire. */
    public ElectionOptions withCampaignWait(Duration wait) {
        return new ElectionOptions(leaseSeconds, wait, safety, backoffMin, backoffMax);
    }

    /** These options with another safety. */
    public ElectionOptions withSafety(Duration safety) {
        return new ElectionOptions(leaseSeconds, campaignWait, safety, backoffMin, backoffMax);
    }

    /** These options with another back-off range. */
    public ElectionOptions withBackoff(Duration min, Duration max) {
        return new ElectionOptions(leaseSeconds, campaignWait, safety, min, max);
    }
}
