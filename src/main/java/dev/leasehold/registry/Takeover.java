package dev.leasehold.registry;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The registry's changes of hands as a whole, each a sweep over every lane: the recovery grace
 * after a restart ({@link #holdAllUntil}), the drain before a stop, and in cluster mode the
 * promotion of a new leader's registry from the replicated table and its reset when the node
 * stops serving (PROTOCOL.md sections 5 and 10).
 */
final class Takeover {

    private final Lanes lanes;
    private final KeyMachine machine;
    private final Capacity capacity;
    private final RegistryObserver observer;

    Takeover(Lanes lanes, KeyMachine machine, Capacity capacity, RegistryObserver observer) {
        this.lanes = lanes;
        this.machine = machine;
        this.capacity = capacity;
        this.observer = observer;
    }

    /** The facade's {@code drain}. */
    void drain() {
        lanes.setDraining(true);
        lanes.forEachLane((lane, now) -> {
            for (KeyState s : lane.keys.snapshot()) {
                machine.emptyQueue(lane, s, w -> {
                    if (w.session().isClosed()) {
                        w.finish(Waiter.Outcome.DROPPED);
                    } else {
                        w.busy(BusyReason.DRAINING);
                        observer.busy(BusyReason.DRAINING);
                        lane.answer(w);
                    }
                });
                machine.settle(lane, s, now, Waiter.NO_HANDOFF);
            }
            return null;
        });
    }

    /** The facade's {@code promote}. */
    void promote(List<HeldGrant> held, long extraNanos) {
        for (HeldGrant h : held) {
            machine.onKey(h.key(), (lane, s, hash, now) -> {
                KeyState k = s != null ? s : new KeyState(h.key(), hash);
                if (!k.noHolds()) {
                    return null; // not empty: keep what is there rather than shorten it
                }
                for (HeldGrant.Slot slot : h.slots()) {
                    install(lane, k, h, slot, now, extraNanos);
                }
                capacity.countCommittedKey(k); // committed grants are not refused by the limit
                lane.keys.putIfAbsent(k);
                return null;
            });
        }
    }

    /**
     * One committed hold on {@code k}: an active grant runs for its longest lease plus
     * {@code extraNanos} from now, so no lease a previous leader granted can end early; a
     * lock-delay runs whole again from now, never shorter than what was left of it (the delay is a
     * duration, section 12). An active exclusive grant keeps its value (section 17). Counted without
     * the limits: committed grants are not refused.
     */
    private void install(Lane lane, KeyState k, HeldGrant h, HeldGrant.Slot slot, long now, long extraNanos) {
        Hold hold = k.addHold(h.mode());
        capacity.reserveCommitted(h.mode());
        if (slot.isActive()) {
            hold.start(slot.token(), now, slot.maxLeaseSeconds(),
                    TimeUnit.SECONDS.toNanos(slot.maxLeaseSeconds()) + extraNanos);
            hold.holder = SessionHandle.Peer.PREVIOUS_LEADER;
            if (!h.mode().isShared()) {
                hold.putValue(slot.value()); // installed with its grant (PROTOCOL.md 17.6)
            }
            capacity.activeStarted(h.mode());
        } else {
            hold.delay(slot.delayedToken(), now, TimeUnit.SECONDS.toNanos(slot.delaySeconds()));
            capacity.delayStarted(h.mode());
        }
        lane.wheel.schedule(hold, hold.nextEventNanos());
    }

    /** The facade's {@code reset}. */
    void reset() {
        lanes.setDraining(true); // refuse acquires that race with the sweep
        lanes.forEachLane((lane, now) -> {
            for (KeyState s : lane.keys.snapshot()) {
                machine.emptyQueue(lane, s, w -> w.finish(Waiter.Outcome.DROPPED));
                machine.dropHolds(lane, s);
                lane.keys.remove(s);
            }
            return null;
        });
        lanes.setDraining(false);
    }
}
