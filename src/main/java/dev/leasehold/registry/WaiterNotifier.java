package dev.leasehold.registry;

/**
 * Receives the answers the registry owes to queued Acquires. Called after the registry's lock
 * is released, from whichever thread caused the event (a Release, an Extend's lazy expiry, or
 * the timer), so implementations hand the answer to the waiter's I/O thread and return.
 * Read the outcome from {@link Waiter#outcome()}.
 */
@FunctionalInterface
public interface WaiterNotifier {

    void answer(Waiter waiter);
}
