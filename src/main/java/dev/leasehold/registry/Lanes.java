package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The keys striped over {@link Lane}s and the one way into a lane ({@link #inLane}: lock, read
 * the lane's clock, run, unlock, deliver), with the two registry-wide switches every lane reads:
 * the drain and the recovery grace. What runs inside a lane is {@link KeyMachine}'s.
 *
 * <p>Answers owed to waiters are collected on the lane while its lock is held and handed to the
 * {@link WaiterNotifier} after it is released; a grant whose lease the stored horizon does not
 * cover yet waits for the horizon store's write first.
 */
final class Lanes {

    /** Timer resolution: T and lease ends come at most about this late (plus the driver's period). */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final Lane[] lanes;
    private final int laneMask;
    private final NanoClock clock;
    private final LeaseHorizon horizon;
    private final WaiterNotifier notifier;
    private final RegistryObserver observer;

    /** Every acquire is refused {@code B} (a drain, or a reset sweeping the lanes). */
    private volatile boolean draining;
    private volatile long graceEndNanos;
    private volatile boolean graceActive;

    Lanes(int laneCount, NanoClock clock, LeaseHorizon horizon, WaiterNotifier notifier, RegistryObserver observer) {
        if (Integer.bitCount(laneCount) != 1) {
            throw new IllegalArgumentException("lane count must be a power of two: " + laneCount);
        }
        this.clock = clock;
        this.horizon = horizon;
        this.notifier = notifier;
        this.observer = observer;
        this.lanes = new Lane[laneCount];
        long now = clock.nanoTime();
        for (int i = 0; i < laneCount; i++) {
            lanes[i] = new Lane(TICK_NANOS, now);
        }
        this.laneMask = laneCount - 1;
    }

    /** An operation on a whole lane, run under its lock. */
    @FunctionalInterface
    interface LaneOp<R> {
        R apply(Lane lane, long now);
    }

    /** The lane of a key's {@link KeyTable#hash}. */
    Lane laneOf(int hash) {
        return lanes[hash & laneMask];
    }

    /**
     * Lock, read the lane's clock, run, publish the watched keys' events, unlock, then deliver the
     * answers owed to waiters, then tell the watches that got an event ({@link Watch#afterDecided}:
     * after the answers, so an event never overtakes its change's answer).
     */
    <R> R inLane(Lane lane, LaneOp<R> op) {
        R result;
        List<Waiter> answers;
        List<Watch> watches;
        lane.lock.lock();
        try {
            long now = lane.now(clock);
            result = op.apply(lane, now);
            if (lane.dirtyFirst != null) {
                Watching.publish(lane, inGrace(now));
            }
            answers = lane.takeAnswers();
            watches = lane.takeNotified();
        } finally {
            lane.lock.unlock();
        }
        deliver(answers);
        if (watches != null) {
            for (Watch w : watches) {
                w.afterDecided();
            }
        }
        return result;
    }

    /** Runs {@code op} on every lane in turn, each under its own lock. */
    void forEachLane(LaneOp<?> op) {
        for (Lane l : lanes) {
            inLane(l, op);
        }
    }

    /** The lanes, for walks that pace themselves ({@link KeyScan#top}). */
    Lane[] all() {
        return lanes;
    }

    /**
     * Hands answers to the notifier, outside the lane lock. A grant whose lease the stored
     * horizon does not cover yet is handed over only once the horizon store has written one
     * that does (on its thread); if that write fails, it is answered {@code B} instead.
     */
    private void deliver(List<Waiter> answers) {
        if (answers == null) {
            return;
        }
        List<Waiter> later = null;
        for (Waiter w : answers) {
            if (w.awaitsHorizon()) {
                if (later == null) {
                    later = new ArrayList<>(4);
                }
                later.add(w);
            } else {
                notifier.answer(w);
            }
        }
        if (later != null) {
            List<Waiter> held = later;
            horizon.whenDurable(onDisk -> {
                for (Waiter w : held) {
                    if (!onDisk) {
                        w.refuseUnwritten();
                        observer.busy(BusyReason.STORAGE);
                    }
                    notifier.answer(w);
                }
            });
        }
    }

    // ---------------------------------------------------------------- drain and grace

    boolean isDraining() {
        return draining;
    }

    void setDraining(boolean on) {
        draining = on;
    }

    /** Every key behaves as held until {@code endNanos}; each lane settles its keys once it ends. */
    void holdAllUntil(long endNanos) {
        graceEndNanos = endNanos;
        graceActive = true;
        forEachLane((lane, now) -> {
            lane.graceSettled = false;
            return null;
        });
    }

    boolean inGrace(long now) {
        return graceActive && now - graceEndNanos < 0;
    }

    long graceRemainingNanos() {
        return graceActive ? Math.max(0, graceEndNanos - clock.nanoTime()) : 0;
    }

    long nanoTime() {
        return clock.nanoTime();
    }
}
