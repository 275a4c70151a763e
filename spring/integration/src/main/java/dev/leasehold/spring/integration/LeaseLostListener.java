package dev.leasehold.spring.integration;

import dev.leasehold.client.LossReason;

/**
 * Hears that a lock held through {@link LeaseholdLockRegistry} lost its lease while its owner
 * still held it (a renewal answered NotHeld, or the validity ended without a successful
 * renewal). The owner must stop acting as holder: another process may hold the key now. Its
 * {@code unlock()} will throw {@link java.util.ConcurrentModificationException}.
 *
 * <p>Called on the client's keep-alive thread: keep it short.
 */
@FunctionalInterface
public interface LeaseLostListener {

    /**
     * @param lockKey the key as given to {@link LeaseholdLockRegistry#obtain(Object)}
     * @param token the fencing token of the lost grant
     * @param reason why it was lost
     */
    void leaseLost(String lockKey, long token, LossReason reason);
}
