package dev.leasehold.registry;

import java.util.function.Consumer;

/**
 * A hashed timing wheel (Varghese and Lauck) for lease ends and wait ends: O(1) schedule and
 * cancel, which matters because most waits are cancelled by a grant long before they end.
 *
 * <p>A timer never fires before its deadline: tick {@code t} is processed only once
 * {@code now >= t * tickNanos}, and a timer is placed on the first tick at or after its
 * deadline. It fires at most one tick (plus the driver's period) late.
 *
 * <p>Not thread-safe: each lane owns one wheel and touches it only under the lane lock.
 */
final class TimerWheel {

    private static final int SLOTS = 4096;
    private static final int MASK = SLOTS - 1;

    private final long tickNanos;
    private final TimerNode[] heads = new TimerNode[SLOTS];
    /** The next tick to process; every earlier tick has been processed. */
    private long nextTick;
    private int size;

    TimerWheel(long tickNanos, long nowNanos) {
        this.tickNanos = tickNanos;
        this.nextTick = Math.floorDiv(nowNanos, tickNanos);
    }

    void schedule(TimerNode node, long deadline) {
        if (node.isScheduled()) {
            cancel(node);
        }
        node.deadline = deadline;
        long tick = Math.max(-Math.floorDiv(-deadline, tickNanos), nextTick); // ceil, not in the past
        node.rounds = (tick - nextTick) / SLOTS;
        int slot = (int) (tick & MASK);
        node.slot = slot;
        node.prevTimer = null;
        node.nextTimer = heads[slot];
        if (heads[slot] != null) {
            heads[slot].prevTimer = node;
        }
        heads[slot] = node;
        size++;
    }

    void cancel(TimerNode node) {
        if (!node.isScheduled()) {
            return;
        }
        if (node.prevTimer != null) {
            node.prevTimer.nextTimer = node.nextTimer;
        } else {
            heads[node.slot] = node.nextTimer;
        }
        if (node.nextTimer != null) {
            node.nextTimer.prevTimer = node.prevTimer;
        }
        node.prevTimer = null;
        node.nextTimer = null;
        node.slot = -1;
        size--;
    }

    /**
     * Fires, in no particular order, every timer whose tick has come by {@code now}. The
     * callback may schedule or cancel timers, including the one it was given.
     */
    void advance(long now, Consumer<TimerNode> fire) {
        long lastTick = Math.floorDiv(now, tickNanos);
        while (nextTick <= lastTick) {
            int slot = (int) (nextTick & MASK);
            TimerNode node = heads[slot];
            heads[slot] = null;
            nextTick++; // timers scheduled from the callbacks land on later ticks
            while (node != null) {
                TimerNode next = node.nextTimer;
                node.prevTimer = null;
                node.nextTimer = null;
                if (node.rounds > 0) {
                    node.rounds--;
                    node.nextTimer = heads[slot];
                    if (heads[slot] != null) {
                        heads[slot].prevTimer = node;
                    }
                    heads[slot] = node;
                } else {
                    node.slot = -1;
                    size--;
                    fire.accept(node);
                }
                node = next;
            }
            if (size == 0) {
                nextTick = Math.max(nextTick, lastTick + 1); // nothing to visit: jump ahead
            }
        }
    }

    int size() {
        return size;
    }
}
