package dev.leasehold.registry;

import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.protocol.HoldMode;

/**
 * The registry's counts over all keys and the capacity limits they are held to (PROTOCOL.md
 * section 7): keys with a hold, waiters, and the shared slots and waiters. Lanes change them each
 * under their own lock, so they are atomics; a limit is checked and taken in one step
 * ({@link #tryIncrement}), never past it.
 *
 * <p>Each method is named for the event it counts and asks the hold's mode only whether the
 * event counts: the gauges are those of PROTOCOL.md and docs/metrics.md, unchanged.
 */
final class Capacity {

    private final RegistryLimits limits;
    /** Keys counted against max-held-keys: with any hold, lock-delay included. */
    private final AtomicInteger heldKeys = new AtomicInteger();
    /** Keys in an exclusive lock-delay. */
    private final AtomicInteger delayedKeys = new AtomicInteger();
    private final AtomicInteger waiters = new AtomicInteger();
    /** Shared slots plus shared waiters over all keys, bounded by {@code max-shared-total}. */
    private final AtomicInteger sharedTotal = new AtomicInteger();
    /** Active shared grants (not slots kept by a lock-delay), for the gauge. */
    private final AtomicInteger sharedHeld = new AtomicInteger();

    Capacity(RegistryLimits limits) {
        this.limits = limits;
    }

    // ---------------------------------------------------------------- keys

    /** Counts {@code k} against max-held-keys from its first hold on: false if it is full. */
    boolean countKey(KeyState k) {
        if (!k.countedHeld) {
            if (!tryIncrement(heldKeys, limits.maxHeldKeys())) {
                return false;
            }
            k.countedHeld = true;
        }
        return true;
    }

    /** Counts {@code k} whatever the limit: a committed grant a new leader installs is never refused. */
    void countCommittedKey(KeyState k) {
        if (!k.countedHeld) {
            k.countedHeld = true;
            heldKeys.incrementAndGet();
        }
    }

    /** Stops counting {@code k} once it has no hold left. */
    void uncountKeyIfFree(KeyState k) {
        if (k.countedHeld && k.noHolds()) {
            k.countedHeld = false;
            heldKeys.decrementAndGet();
        }
    }

    // ---------------------------------------------------------------- shared places

    /**
     * Takes a shared place (a slot or a place in a queue) for an acquire in {@code mode}: false
     * if {@code max-shared-total} is reached. Exclusive acquires need none.
     */
    boolean reserve(HoldMode mode) {
        return !mode.isShared() || tryIncrement(sharedTotal, limits.maxSharedTotal());
    }

    /** Takes a shared place whatever the limit: a waiter's place moving to its slot, a committed slot. */
    void reserveCommitted(HoldMode mode) {
        if (mode.isShared()) {
            sharedTotal.incrementAndGet();
        }
    }

    /** Gives a shared place back: a refused grant, a waiter leaving its queue, a slot freed. */
    void unreserve(HoldMode mode) {
        if (mode.isShared()) {
            sharedTotal.decrementAndGet();
        }
    }

    // ---------------------------------------------------------------- holds

    /** A grant in {@code mode} became active. */
    void activeStarted(HoldMode mode) {
        if (mode.isShared()) {
            sharedHeld.incrementAndGet();
        }
    }

    /** An active grant in {@code mode} ended (Release, lease end, reset). */
    void activeEnded(HoldMode mode) {
        if (mode.isShared()) {
            sharedHeld.decrementAndGet();
        }
    }

    /** A hold in {@code mode} went into lock-delay: an exclusive one makes its key a delayed key. */
    void delayStarted(HoldMode mode) {
        if (!mode.isShared()) {
            delayedKeys.incrementAndGet();
        }
    }

    /** A lock-delay in {@code mode} ended. */
    void delayEnded(HoldMode mode) {
        if (!mode.isShared()) {
            delayedKeys.decrementAndGet();
        }
    }

    // ---------------------------------------------------------------- waiters

    /** Takes a place among all waiters: false if {@code max-waiters-total} is reached. */
    boolean addWaiter() {
        return tryIncrement(waiters, limits.maxWaitersTotal());
    }

    void removeWaiter() {
        waiters.decrementAndGet();
    }

    // ---------------------------------------------------------------- gauges

    /** Keys with an active grant (exclusive or shared), not counting keys in an exclusive lock-delay. */
    int heldKeys() {
        return heldKeys.get() - delayedKeys.get();
    }

    int delayedKeys() {
        return delayedKeys.get();
    }

    int waiters() {
        return waiters.get();
    }

    int sharedTotal() {
        return sharedTotal.get();
    }

    int sharedHeld() {
        return sharedHeld.get();
    }

    /** Increments {@code counter} unless it has reached {@code limit}: never past it, even when lanes race. */
    private static boolean tryIncrement(AtomicInteger counter, int limit) {
        while (true) {
            int n = counter.get();
            if (n >= limit) {
                return false;
            }
            if (counter.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }
}
