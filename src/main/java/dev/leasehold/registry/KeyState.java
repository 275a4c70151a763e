package dev.leasehold.registry;

/**
 * One key's grant and FIFO queue. Present in its lane's map while the key is HELD or QUEUED,
 * removed when it becomes FREE. The timer node is the lease end.
 *
 * <p>Guarded by the lock of the lane that holds it.
 */
final class KeyState extends TimerNode {

    /** The key's exact bytes (compared byte for byte, no normalisation); never modified. */
    final byte[] key;
    /** {@link KeyTable#hash}(key): picks the lane (low bits) and the table slot. */
    final int hash;
    /** Active grant's token, or 0 when no grant is active (only transiently, or during a grace). */
    long token;
    long grantNanos;
    long leaseEndNanos;
    /** Whether this key counts against max-held-keys (from a grant until it has none). */
    boolean countedHeld;

    Waiter head;
    Waiter tail;
    int waiters;

    KeyState(byte[] key, int hash) {
        this.key = key;
        this.hash = hash;
    }

    boolean isHeld() {
        return token != 0;
    }

    /** True if the active grant's lease has reached its end, processed or not. */
    boolean leaseOver(long now) {
        return now - leaseEndNanos >= 0;
    }

    void enqueue(Waiter w) {
        w.prevInQueue = tail;
        w.nextInQueue = null;
        if (tail == null) {
            head = w;
        } else {
            tail.nextInQueue = w;
        }
        tail = w;
        waiters++;
    }

    void unlink(Waiter w) {
        if (w.prevInQueue == null) {
            head = w.nextInQueue;
        } else {
            w.prevInQueue.nextInQueue = w.nextInQueue;
        }
        if (w.nextInQueue == null) {
            tail = w.prevInQueue;
        } else {
            w.nextInQueue.prevInQueue = w.prevInQueue;
        }
        w.prevInQueue = null;
        w.nextInQueue = null;
        waiters--;
    }
}
