package dev.leasehold.registry;

import java.util.List;

/**
 * The keys an operator looks at first ({@link LockRegistry#top}): the longest queues and the
 * oldest grants, each key read again under its lane lock, and what the walk cost.
 *
 * @param longestQueues keys with waiters, the longest queue first (as read again)
 * @param heldLongest held keys, the oldest grant first
 * @param scannedKeys keys the walk visited
 * @param tookNanos how long the walk took
 */
public record TopKeys(List<KeyView> longestQueues, List<KeyView> heldLongest, long scannedKeys, long tookNanos) {
}
