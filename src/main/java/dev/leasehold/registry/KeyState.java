package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;

/**
 * One key: its holds and its FIFO queue, and the per-key rules of the request × key state matrix
 * (PROTOCOL.md sections 5, 12 and 13) as a deterministic state machine: the instant {@code now}
 * and the next token are inputs, and every rule returns what it decided as a value. Nothing here
 * reads a clock, issues a token, touches a counter shared by other keys, a timer or a session:
 * that is the shell's work ({@link Lanes}).
 *
 * <p>A key's holds are all of one kind at a time: its own exclusive hold (this object is that
 * {@link Hold}, inline, so an exclusive grant allocates nothing beyond its key), or shared slots
 * under one shared mode. One queue orders every mode, so a reader never overtakes a queued
 * writer; each mode contributes only its admission rule ({@link #admits}).
 *
 * <p>Present in its lane's table while the key has a hold, a waiter or a watch, removed when it
 * becomes FREE and unwatched. Guarded by the lock of the lane (or table) that holds it.
 */
final class KeyState extends Hold {

    /** What an acquire meets at its receipt. */
    enum Admission {
        /** Admitted: grant at once (subject to the shell's limits). */
        GRANT,
        /** Taken and wait = 0: {@code T} at once. */
        TIMED_OUT,
        /** Taken and wait &gt; 0: join the queue (subject to the shell's limits). */
        ENQUEUE,
        /** A shared acquire whose limit is not the key's: {@code L} (PROTOCOL.md 13.2). */
        MISMATCH
    }

    /** The key's exact bytes (compared byte for byte, no normalisation); never modified. */
    final byte[] key;
    /** {@link KeyTable#hash}(key): picks the lane (low bits) and the table slot. */
    final int hash;
    /** Whether this key counts against max-held-keys (from a grant until it has no hold, lock-delay included). */
    boolean countedHeld;

    Waiter head;
    Waiter tail;
    int waiters;

    /**
     * The mode of the key's shared holds and shared waiters, which all share one limit (13.2);
     * null while it has neither. Another shared mode is answered {@code L}.
     */
    HoldMode sharedMode;
    /** The shared slots, newest first: active shared grants and slots kept by a lock-delay. */
    SharedSlot sharedFirst;
    int sharedSlots;
    int sharedWaiters;

    // Watches (PROTOCOL.md section 16), kept by Watching.
    /** The key's watches, newest first; null when none (then a FREE key leaves the table). */
    Watch watchFirst;
    /** The last event told to the key's watches; null while it has none. */
    KeyEvent lastEvent;
    /** The highest token granted on the key while it was known to its lane (the token of {@code F} and {@code S}). */
    long highestToken;
    /** Changed by the lane operation in progress, with the cause to report; linked from {@link Lane#dirtyFirst}. */
    boolean dirty;
    int dirtyCause;
    KeyState nextDirty;

    KeyState(byte[] key, int hash) {
        this.key = key;
        this.hash = hash;
    }

    @Override
    HoldMode mode() {
        return HoldMode.EXCLUSIVE;
    }

    /** Held by an active exclusive grant. */
    boolean isHeld() {
        return isActive();
    }

    /** FREE: no hold of any kind and nobody waiting. */
    boolean isFree() {
        return noHolds() && head == null;
    }

    /** Has no hold of any kind, active or delayed (waiters or not). */
    boolean noHolds() {
        return isEmpty() && sharedSlots == 0;
    }

    // ------------------------------------------------------------------ admission

    /**
     * The matrix row for an acquire in {@code mode} on this (settled) key: the limit check first
     * (13.2), then FIFO: admitted only with nobody waiting. {@code heldByGrace}: every key behaves
     * as held during a recovery grace (section 5).
     */
    Admission admit(HoldMode mode, long waitMillis, boolean heldByGrace, int maxSharedPerKey) {
        if (mode.isShared() && sharedMode != null && !sharedMode.equals(mode)) {
            return Admission.MISMATCH;
        }
        if (!heldByGrace && head == null && admits(mode, maxSharedPerKey)) {
            return Admission.GRANT;
        }
        return waitMillis == 0 ? Admission.TIMED_OUT : Admission.ENQUEUE;
    }

    /**
     * Each mode's admission rule, queue aside: an exclusive hold only on a key with no hold at all;
     * a shared one while the key has no exclusive hold (active or in lock-delay) and a slot of
     * the mode is free.
     */
    boolean admits(HoldMode mode, int maxSharedPerKey) {
        return switch (mode.kind()) {
            case EXCLUSIVE -> noHolds();
            case READ, PERMITS -> isEmpty() && sharedSlots < mode.slots(maxSharedPerKey);
        };
    }

    /** The waiter to grant next: the head, if its mode is admitted now; never one behind it (13.3). */
    Waiter nextToGrant(boolean heldByGrace, int maxSharedPerKey) {
        return !heldByGrace && head != null && admits(head.mode, maxSharedPerKey) ? head : null;
    }

    // ------------------------------------------------------------------ holds

    /**
     * A new, empty hold of {@code mode}, to be started or delayed by the caller: this key's own
     * for an exclusive hold, else a new shared slot at the front of the list (which fixes the
     * key's shared mode).
     */
    Hold addHold(HoldMode mode) {
        if (!mode.isShared()) {
            return this;
        }
        SharedSlot g = new SharedSlot(this, mode);
        g.next = sharedFirst;
        if (sharedFirst != null) {
            sharedFirst.prev = g;
        }
        sharedFirst = g;
        sharedSlots++;
        sharedMode = mode;
        return g;
    }

    /** The hold the latest {@link #addHold} of {@code mode} made (slots are added at the front). */
    Hold newestHold(HoldMode mode) {
        return mode.isShared() ? sharedFirst : this;
    }

    /** The active hold with token {@code t}, exclusive or shared, or null ({@code N}). */
    Hold activeHold(long t) {
        if (t == 0) {
            return null;
        }
        if (holds(t)) {
            return this;
        }
        for (SharedSlot g = sharedFirst; g != null; g = g.next) {
            if (g.token == t) {
                return g;
            }
        }
        return null;
    }

    /**
     * Lets go of an empty hold: a shared slot leaves the list (and the shared mode is forgotten
     * once nothing shared uses it); the key's own hold needs nothing.
     */
    void removeHold(Hold h) {
        if (!(h instanceof SharedSlot g)) {
            return;
        }
        if (g.prev == null) {
            sharedFirst = g.next;
        } else {
            g.prev.next = g.next;
        }
        if (g.next != null) {
            g.next.prev = g.prev;
        }
        g.prev = null;
        g.next = null;
        sharedSlots--;
        forgetSharedModeIfUnused();
    }

    /** One shared mode per key only while something shared uses it (13.2). */
    private void forgetSharedModeIfUnused() {
        if (sharedSlots == 0 && sharedWaiters == 0) {
            sharedMode = null;
        }
    }

    // ------------------------------------------------------------------ the FIFO queue

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
        if (w.mode.isShared()) {
            sharedWaiters++;
            sharedMode = w.mode; // a queued shared acquire fixes the key's limit (13.2)
        }
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
        if (w.mode.isShared()) {
            sharedWaiters--;
            forgetSharedModeIfUnused();
        }
    }
}
