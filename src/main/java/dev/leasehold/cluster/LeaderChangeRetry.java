package dev.leasehold.cluster;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.util.TimeDuration;

/**
 * Retries an admin request while the leader it reached is changing, until a deadline.
 *
 * <p>Right after a leadership handover, or an election, the new leader answers "not leader" or
 * "leader not ready" until it has committed an entry of its own term; with no retry at all a
 * membership change would fail on a healthy cluster. Ratis's client resends under the same call
 * id, so the leader's retry cache answers a resent request that already ran with its first
 * reply. A request that timed out is never retried: the attempt has used the time there was.
 */
final class LeaderChangeRetry implements RetryPolicy {

    private static final TimeDuration PAUSE = TimeDuration.valueOf(200, TimeUnit.MILLISECONDS);

    private final long deadlineNanos;
    private final LongSupplier nanoTime;

    /** @param deadlineNanos on {@code nanoTime}'s scale: no resend that would start after it */
    LeaderChangeRetry(long deadlineNanos, LongSupplier nanoTime) {
        this.deadlineNanos = deadlineNanos;
        this.nanoTime = nanoTime;
    }

    @Override
    public Action handleAttemptFailure(Event event) {
        Throwable cause = event.getCause();
        // The blocking client passes no cause when the reply itself said "not leader" / "not ready".
        boolean leaderChanging = cause == null || cause instanceof NotLeaderException
                || cause instanceof LeaderNotReadyException;
        boolean timeLeft = nanoTime.getAsLong() + PAUSE.toLong(TimeUnit.NANOSECONDS) < deadlineNanos;
        return leaderChanging && timeLeft ? () -> PAUSE : NO_RETRY_ACTION;
    }

    @Override
    public String toString() {
        return "LeaderChangeRetry(until the change's deadline)";
    }
}
