package dev.leasehold.client;

import java.time.Duration;
import java.util.Optional;

/**
 * A fenced, fair, leased semaphore of {@code permits} on one key (PROTOCOL.md section 13): each
 * permit is a shared grant ({@code S} with limit {@code permits}) with its own fencing token and
 * lease, returned as a {@link Ticket} you release (or close). Permits are granted in strict
 * arrival order. Every user of the key must agree on {@code permits}: one that does not gets
 * {@link SharedLimitException} naming both numbers. Made by
 * {@link LeaseholdClient#semaphore(String, int, int)}; see docs/shared.md ("at most N at once").
 */
public final class FencedSemaphore {

    private final LeaseholdClient client;
    private final String key;
    private final int permits;
    private final int leaseSeconds;

    FencedSemaphore(LeaseholdClient client, String key, int permits, int leaseSeconds) {
        if (permits < 1 || permits > 65535) {
            throw new IllegalArgumentException("permits must be 1..65535, not " + permits);
        }
        this.client = client;
        this.key = key;
        this.permits = permits;
        this.leaseSeconds = leaseSeconds;
    }

    /** The key. */
    public String key() {
        return key;
    }

    /** How many permits the semaphore has. */
    public int permits() {
        return permits;
    }

    /**
     * Takes one permit, waiting at most {@code wait} (at most 255 s) in the key's queue:
     * to the millisecond on a revision 1.4 server, rounded up to whole seconds on a 1.3 one.
     *
     * @return the permit (its {@link Ticket#token()} is the fencing token), or empty if none was
     *         granted (timed out, busy, unavailable or indeterminate: no permit is held)
     * @throws SharedLimitException if the key's semaphore has another number of permits
     */
    public Optional<Ticket> tryAcquire(Duration wait) {
        return Optional.ofNullable(permit(client.acquireShared(key, permits, FencedLock.wait(wait),
                leaseSeconds)));
    }

    /**
     * Takes one permit with the whole outcome (PROTOCOL.md 9.1), for callers that tell a timeout
     * from an indeterminate result.
     */
    public AcquireOutcome acquire(int waitSeconds) {
        return client.acquireShared(key, permits, waitSeconds, leaseSeconds);
    }

    private Ticket permit(AcquireOutcome o) {
        if (o instanceof AcquireOutcome.LimitMismatch m) {
            throw new SharedLimitException(key, m);
        }
        return o instanceof AcquireOutcome.Acquired a ? a.ticket() : null;
    }

    @Override
    public String toString() {
        return "semaphore " + Keys.quoted(key) + " of " + permits;
    }
}
