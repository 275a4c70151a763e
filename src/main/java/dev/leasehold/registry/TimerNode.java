package dev.leasehold.registry;

/**
 * An entry of a {@link TimerWheel}, linked in place (no allocation per timer). Guarded by the
 * lock of the lane that owns the wheel.
 */
abstract class TimerNode {

    /** Earliest instant (nanos) at which the timer may fire. */
    long deadline;
    TimerNode prevTimer;
    TimerNode nextTimer;
    int slot = -1;
    long rounds;

    final boolean isScheduled() {
        return slot >= 0;
    }
}
