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
    /**
     * Wheel slot (0..4095), or {@link TimerWheel#UNSCHEDULED} / {@link TimerWheel#DUE}. A short and
     * an int (rather than int and long) so that a {@link KeyState} (one per held lock) stays at
     * 80 bytes instead of 88: measured per held lock by bench/ W3.
     */
    short slot = -1;
    /** Full turns of the wheel still to wait; leases and waits are at most 255 s, a few turns. */
    int rounds;

    final boolean isScheduled() {
        return slot >= 0;
    }
}
