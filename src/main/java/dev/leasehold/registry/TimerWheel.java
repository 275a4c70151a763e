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
    /** {@link TimerNode#slot} of a node that is not in the wheel. */
    static final int UNSCHEDULED = -1;
    /** {@link TimerNode#slot} of a node taken out of its slot to be fired in the current pass. */
    static final int DUE = -2;

    private final TimerNode[] heads = new TimerNode[SLOTS];
    private final java.util.ArrayList<TimerNode> due = new java.util.ArrayList<>();
    /** The next tick to process; every earlier tick has been processed. */
    private long nextTick;
    private int size;

    TimerWheel(long tickNanos, long nowNanos) {
        this.tickNanos = tickNanos;
        this.nextTick = Math.floorDiv(nowNanos, tickNanos);
    }

    void schedule(TimerNode node, long deadline) {
        cancel(node);
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
        if (node.slot == DUE) {
            node.slot = UNSCHEDULED; // taken out of its slot for this pass: just don't fire it
            return;
        }
        if (!node.isScheduled()) {
            return;
        }
        unlink(node);
    }

    /**
     * Fires, in slot order, every timer whose tick has come by {@code now}. The callback may
     * schedule or cancel any timer, including ones due in the same pass (a cancelled one is then
     * not fired).
     */
    void advance(long now, Consumer<TimerNode> fire) {
        long lastTick = Math.floorDiv(now, tickNanos);
        while (nextTick <= lastTick) {
            int slot = (int) (nextTick & MASK);
            nextTick++; // timers scheduled from the callbacks land on later ticks
            // First collect what is due without running callbacks, so they see a consistent wheel.
            TimerNode node = heads[slot];
            while (node != null) {
                TimerNode next = node.nextTimer;
                if (node.rounds > 0) {
                    node.rounds--;
                } else {
                    unlink(node);
                    node.slot = DUE;
                    due.add(node);
                }
                node = next;
            }
            for (int i = 0; i < due.size(); i++) {
                TimerNode d = due.get(i);
                if (d.slot == DUE) {
                    d.slot = UNSCHEDULED;
                    fire.accept(d);
                }
            }
            due.clear();
            if (size == 0) {
                nextTick = Math.max(nextTick, lastTick + 1); // nothing to visit: jump ahead
            }
        }
    }

    private void unlink(TimerNode node) {
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
        node.slot = UNSCHEDULED;
        size--;
    }

    int size() {
        return size;
    }
}
