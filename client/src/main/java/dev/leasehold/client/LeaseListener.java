package dev.leasehold.client;

import java.time.Duration;

/**
 * Hears what happens to a ticket kept alive by {@link LeaseholdClient#keepAlive}. Called on the
 * client's keep-alive thread (never an I/O thread): keep it short, hand long work elsewhere.
 */
@FunctionalInterface
public interface LeaseListener {

    /**
     * The lease is lost for good: stop acting as holder now. Called at most once per ticket; a
     * lost ticket stays lost (another holder may already have the key).
     *
     * @param ticket the lost grant
     * @param reason why
     * @param detail what happened, for logs
     */
    void leaseLost(Ticket ticket, LossReason reason, String detail);

    /**
     * An Extend is late: no answer came within a third of the lease, so the ticket's validity
     * may run out before the next answer. Optional; by default nothing happens.
     *
     * @param ticket the grant at risk
     * @param remaining time left before {@link Ticket#validUntilNanos()}
     */
    default void leaseAtRisk(Ticket ticket, Duration remaining) {
    }
}
