package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;

/**
 * One shared hold of a key (PROTOCOL.md section 13): a read lock's or a semaphore permit's
 * grant, with its own token and lease, or its slot kept by a lock-delay. Linked in place into its
 * key's list of slots ({@link KeyState#sharedFirst}) and into its lane's timer wheel. Guarded by
 * the lane lock.
 */
final class SharedSlot extends Hold {

    private final KeyState state;
    private final HoldMode mode;

    SharedSlot prev;
    SharedSlot next;

    SharedSlot(KeyState state, HoldMode mode) {
        this.state = state;
        this.mode = mode;
    }

    /** The key this slot is on. */
    KeyState key() {
        return state;
    }

    @Override
    HoldMode mode() {
        return mode;
    }
}
