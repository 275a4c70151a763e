package dev.leasehold.registry;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.HoldMode;

/**
 * The per-key machinery that runs under a lane's lock: entering a key ({@link #onKey}: its lane,
 * then the key settled), settling it (lease ends, delay ends, grants to the head of its queue),
 * granting, queueing, leaving the queue, and the timers. Written once for every
 * {@link HoldMode}: a mode only decides its admission ({@link KeyState#admits}) and which counters
 * an event moves ({@link Capacity}).
 *
 * <p>Every method but {@link #onKey} and {@link #advance} runs with its lane's lock held and never
 * blocks; answers owed to waiters go to the lane ({@link Lane#answer}), delivered by
 * {@link Lanes} once the lock is let go.
 */
final class KeyMachine {

    private final Lanes lanes;
    private final TokenSource tokens;
    private final LeaseHorizon horizon;
    private final RegistryObserver observer;
    private final RegistryLimits limits;
    private final DecisionLog decisions;
    private final Capacity capacity;

    KeyMachine(Lanes lanes, RegistryLimits limits, TokenSource tokens, LeaseHorizon horizon,
            RegistryObserver observer, DecisionLog decisions, Capacity capacity) {
        this.lanes = lanes;
        this.limits = limits;
        this.tokens = tokens;
        this.horizon = horizon;
        this.observer = observer;
        this.decisions = decisions;
        this.capacity = capacity;
    }

    /** An operation on one key, run under its lane's lock with the key settled at {@code now}. */
    @FunctionalInterface
    interface KeyOp<R> {
        /** @param s the key's state, or null if the key is FREE and unknown to the lane */
        R apply(Lane lane, KeyState s, int hash, long now);
    }

    /** Finds the key's lane, settles the key, runs {@code op}: the one way a request enters a lane. */
    <R> R onKey(byte[] key, KeyOp<R> op) {
        int hash = KeyTable.hash(key);
        return lanes.inLane(lanes.laneOf(hash), (lane, now) -> {
            KeyState s = lane.keys.get(key, hash);
            if (s != null && !settle(lane, s, now, Waiter.NO_HANDOFF)) {
                s = null; // settled to FREE and forgotten
            }
            return op.apply(lane, s, hash, now);
        });
    }

    // ---------------------------------------------------------------- acquire (lane lock held)

    /**
     * The matrix row for an acquire in {@code mode} on {@code s} (null: FREE and unknown):
     * {@code L}, a grant, {@code T}, or a place in the queue.
     */
    AcquireResult acquire(Lane lane, KeyState s, byte[] key, int hash, long now, HoldMode mode, long waitMillis,
            int leaseSeconds, long owner, long receiptNanos, SessionHandle session, byte[] value) {
        if (lanes.isDraining()) {
            // Checked under the lane lock: drain() sets the flag before it sweeps each lane, so an
            // acquire racing with it is either swept or refused here, never left queued.
            return busy(BusyReason.DRAINING);
        }
        KeyState k = s != null ? s : new KeyState(key, hash);
        return switch (k.admit(mode, waitMillis, lanes.inGrace(now), limits.maxSharedPerKey())) {
            case MISMATCH -> {
                observer.limitMismatch();
                yield new AcquireResult.LimitMismatch(k.sharedMode.limit());
            }
            case TIMED_OUT -> {
                observer.timedOut();
                yield AcquireResult.TIMED_OUT;
            }
            case GRANT -> {
                if (!capacity.reserve(mode)) {
                    yield busy(BusyReason.SHARED_TOTAL);
                }
                AcquireResult r = grantNow(lane, k, mode, now, leaseSeconds, owner, session, value);
                if (r instanceof AcquireResult.Busy) {
                    capacity.unreserve(mode);
                } else if (r instanceof AcquireResult.Queued deferred) {
                    lane.answer(deferred.waiter()); // delivered when the horizon covers it
                }
                yield r;
            }
            case ENQUEUE -> {
                if (!capacity.reserve(mode)) {
                    yield busy(BusyReason.SHARED_TOTAL);
                }
                AcquireResult r = enqueue(lane, k, mode, owner, waitMillis, leaseSeconds, receiptNanos, session, value);
                if (!(r instanceof AcquireResult.Queued q) || q.waiter().outcome() == Waiter.Outcome.DROPPED) {
                    capacity.unreserve(mode);
                }
                yield r;
            }
        };
    }

    private AcquireResult grantNow(Lane lane, KeyState s, HoldMode mode, long now, int leaseSeconds, long owner,
            SessionHandle session, byte[] value) {
        Taken taken = takeGrant(lane, s, mode, now, leaseSeconds, session.peer(), value);
        if (taken.refused() != null) {
            capacity.uncountKeyIfFree(s);
            return busy(taken.refused());
        }
        observer.granted(mode, 0, false);
        long token = s.newestHold(mode).token;
        if (taken.awaitsHorizon()) {
            // Granted now; the A goes out through the notifier once the horizon covers the lease.
            // An immediate grant answers queued_ms 0 (PROTOCOL.md section 3), however long the frame
            // took from its decoding to this lane (a cold server: 2-13 ms): the waiter's "receipt"
            // is the grant itself. Reporting less than the real wait only shortens the client's bound.
            Waiter w = new Waiter(owner, leaseSeconds, now, session, s, mode, value);
            w.granted(token, now);
            w.awaitHorizon();
            return new AcquireResult.Queued(w);
        }
        return new AcquireResult.Granted(token);
    }

    /**
     * Adds a grant in {@code mode} to {@code s} (the caller reserved its shared place), or says
     * why it cannot be. The new hold is {@code s.newestHold(mode)}. A key is counted against
     * {@code max-held-keys} from its first hold until it has none, so a hand-off from a releaser to
     * a waiter never competes with other keys for the place. The grant carries {@code value} (its
     * {@code M}'s, or null), logged with it as one decision (PROTOCOL.md 17.6).
     */
    private Taken takeGrant(Lane lane, KeyState s, HoldMode mode, long now, int leaseSeconds,
            SessionHandle.Peer holder, byte[] value) {
        if (!capacity.countKey(s)) {
            return Taken.refused(BusyReason.HELD_KEYS);
        }
        long leaseNanos = TimeUnit.SECONDS.toNanos(leaseSeconds);
        Taken admitted = switch (horizon.approve(now, now + leaseNanos)) {
            case REFUSED -> Taken.refused(BusyReason.STORAGE);
            case AFTER_WRITE -> Taken.AFTER_HORIZON;
            case ON_DISK -> Taken.NOW;
        };
        if (admitted.refused() != null) {
            return admitted;
        }
        long token = tokens.next();
        if (token == TokenSource.NONE) {
            return Taken.refused(tokens.noneReason());
        }
        Hold h = s.addHold(mode);
        h.start(token, now, leaseSeconds, leaseNanos);
        s.highestToken = token;
        Watching.touched(lane, s, Answer.Event.CAUSE_GRANT);
        h.holder = holder;
        h.putValue(value);
        capacity.activeStarted(mode);
        decisions.granted(s.key, token, leaseSeconds, mode, h.value());
        lane.wheel.schedule(h, h.leaseEndNanos);
        lane.keys.putIfAbsent(s);
        return admitted;
    }

    /**
     * What {@link #takeGrant} did: granted, with the answer due now or once the lease horizon
     * covers the lease ({@code awaitsHorizon}), or refused for a reason. Shared constants: taking
     * a grant allocates nothing.
     */
    private record Taken(BusyReason refused, boolean awaitsHorizon) {
        static final Taken NOW = new Taken(null, false);
        static final Taken AFTER_HORIZON = new Taken(null, true);
        private static final Map<BusyReason, Taken> REFUSED = new EnumMap<>(BusyReason.class);

        static {
            for (BusyReason r : BusyReason.values()) {
                REFUSED.put(r, new Taken(r, false));
            }
        }

        static Taken refused(BusyReason reason) {
            return REFUSED.get(reason);
        }
    }

    /**
     * Queues an acquire. An acquire of a session that has already closed is dropped (no answer
     * is owed to it) and reported as Queued, which is what its handler must do: write nothing.
     */
    private AcquireResult enqueue(Lane lane, KeyState s, HoldMode mode, long owner, long waitMillis,
            int leaseSeconds, long receiptNanos, SessionHandle session, byte[] value) {
        if (s.waiters >= limits.maxWaitersPerKey()) {
            return busy(BusyReason.KEY_QUEUE);
        }
        if (!capacity.addWaiter()) {
            return busy(BusyReason.TOTAL_WAITERS);
        }
        Waiter w = new Waiter(owner, leaseSeconds, receiptNanos, session, s, mode, value);
        if (session.isClosed()) {
            capacity.removeWaiter();
            w.finish(Waiter.Outcome.DROPPED);
            return new AcquireResult.Queued(w);
        }
        if (!session.tryAdd(w, limits.maxPendingPerSession())) {
            capacity.removeWaiter();
            return busy(BusyReason.SESSION);
        }
        s.enqueue(w);
        lane.keys.putIfAbsent(s);
        // Its wait runs from receipt, to the millisecond whatever the frame carried (A, S: whole seconds).
        lane.wheel.schedule(w, receiptNanos + TimeUnit.MILLISECONDS.toNanos(waitMillis));
        return new AcquireResult.Queued(w);
    }

    AcquireResult busy(BusyReason reason) {
        observer.busy(reason);
        return new AcquireResult.Busy(reason);
    }

    // ---------------------------------------------------------------- settle (lane lock held)

    /**
     * Brings a key up to date at {@code now}: ends every lease that has run out and every
     * lock-delay that is over, grants to the head of the queue while its mode is admitted (and
     * no recovery grace runs), and forgets a FREE key. A waiter granted here was handed the key by
     * a Release read at {@code handoffStartNanos} ({@link Waiter#NO_HANDOFF} if none).
     *
     * @return false if the key is FREE and no longer in its lane's table
     */
    boolean settle(Lane lane, KeyState s, long now, long handoffStartNanos) {
        settleHold(lane, s, s, now);
        for (SharedSlot g = s.sharedFirst; g != null; ) {
            SharedSlot next = g.next; // settleHold may unlink g
            settleHold(lane, s, g, now);
            g = next;
        }
        boolean grace = lanes.inGrace(now);
        for (Waiter w = s.nextToGrant(grace, limits.maxSharedPerKey()); w != null;
                w = s.nextToGrant(grace, limits.maxSharedPerKey())) {
            leaveQueue(lane, w);
            if (w.session().isClosed()) {
                w.finish(Waiter.Outcome.DROPPED);
            } else {
                grantWaiter(lane, s, w, now, handoffStartNanos);
            }
        }
        if (s.noHolds()) {
            capacity.uncountKeyIfFree(s);
            if (s.head == null && s.watchFirst == null) { // a watched key stays known (Watching)
                lane.keys.remove(s); // by identity: a no-op if s is not (or no longer) in the table
                return false;
            }
        }
        return true;
    }

    /**
     * Ends {@code h}'s lease if it is over at {@code now} (its place then kept for the lock-delay
     * from the lease's end, section 12, or freed), and its lock-delay if that is over.
     */
    private void settleHold(Lane lane, KeyState s, Hold h, long now) {
        long expiring = h.token;
        long held = h.expire(now);
        if (held >= 0) {
            HoldMode mode = h.mode();
            observer.ended(mode, held, true);
            capacity.activeEnded(mode);
            lane.wheel.cancel(h);
            long delay = limits.lockDelayNanos();
            decisions.expired(s.key, expiring, (int) TimeUnit.NANOSECONDS.toSeconds(delay));
            Watching.touched(lane, s, Answer.Event.CAUSE_EXPIRY);
            if (delay > 0) {
                h.delay(expiring, h.leaseEndNanos, delay); // from the lease's end, not from when the timer got to it
                capacity.delayStarted(mode);
                lane.wheel.schedule(h, h.delayEndNanos);
            } else {
                free(s, h);
                return;
            }
        }
        long delayed = h.delayedToken;
        if (h.endDelay(now)) {
            capacity.delayEnded(h.mode());
            decisions.delayEnded(s.key, delayed);
            Watching.touched(lane, s, Answer.Event.CAUSE_DELAY_END);
            lane.wheel.cancel(h);
            free(s, h);
        }
    }

    /** Lets go of an empty hold: a shared slot leaves its key and gives its shared place back. */
    private void free(KeyState s, Hold h) {
        s.removeHold(h);
        if (h != s) {
            capacity.unreserve(h.mode());
        }
    }

    /**
     * Grants the head waiter {@code w} (already out of the queue) a hold in its mode, or answers
     * it {@code B}; a Release read at {@code handoffStartNanos} handed it the key.
     */
    private void grantWaiter(Lane lane, KeyState s, Waiter w, long now, long handoffStartNanos) {
        HoldMode mode = w.mode;
        capacity.reserveCommitted(mode); // its place as a waiter moves to its slot (or is undone below)
        Taken taken = takeGrant(lane, s, mode, now, w.leaseSeconds(), w.session().peer(), w.value);
        if (taken.refused() != null) {
            capacity.unreserve(mode);
            w.busy(taken.refused());
            observer.busy(taken.refused());
        } else {
            w.handedOffBy(handoffStartNanos);
            w.granted(s.newestHold(mode).token, now);
            if (taken.awaitsHorizon()) {
                w.awaitHorizon();
            }
            observer.granted(mode, now - w.receiptNanos(), true);
        }
        lane.answer(w);
    }

    /** Ends the active grant {@code h} of {@code s} at once (a Release, a reset): no lock-delay. */
    void endGrant(Lane lane, KeyState s, Hold h) {
        Watching.touched(lane, s, Answer.Event.CAUSE_RELEASE);
        lane.wheel.cancel(h);
        h.end();
        capacity.activeEnded(h.mode());
        free(s, h);
    }

    /** Forgets every hold of {@code s} at once, active or delayed (a reset). */
    void dropHolds(Lane lane, KeyState s) {
        if (s.isActive()) {
            endGrant(lane, s, s);
        } else if (s.isDelayed()) {
            lane.wheel.cancel(s);
            s.clearDelay();
            capacity.delayEnded(s.mode());
        }
        while (s.sharedFirst != null) {
            SharedSlot g = s.sharedFirst;
            if (g.isActive()) {
                endGrant(lane, s, g);
            } else {
                lane.wheel.cancel(g);
                g.clearDelay();
                free(s, g);
            }
        }
        capacity.uncountKeyIfFree(s);
    }

    // ---------------------------------------------------------------- values (lane lock held)

    /**
     * A set value ({@code V}, PROTOCOL.md 17.2) of {@code token} on {@code s} (null: FREE), settled
     * at entry as for a Release, so at or after the lease end it is {@code N}: the one place where a
     * {@code V} changes a grant's value. Logged whatever the outcome, as a Release is, so that its
     * answer waits for a commit made after it (17.6).
     *
     * @param value the new value; empty clears it
     */
    ValueResult setValue(Lane lane, KeyState s, byte[] key, long token, byte[] value) {
        decisions.valueSet(key, token, value);
        Hold h = s == null ? null : s.activeHold(token);
        if (h == null || h.mode().isShared()) {
            return ValueResult.NOT_HELD; // values on shared grants are not in 1.4
        }
        if (!h.putValue(value)) {
            return ValueResult.SET_UNCHANGED; // the same value: no event (PROTOCOL.md 17.2 rule 4)
        }
        Watching.touched(lane, s, Answer.Event.CAUSE_VALUE);
        return ValueResult.SET_CHANGED;
    }

    // ---------------------------------------------------------------- the queue (lane lock held)

    /** Takes every waiter off {@code s}'s queue, in order, and hands each to {@code then}. */
    void emptyQueue(Lane lane, KeyState s, Consumer<Waiter> then) {
        while (s.head != null) {
            Waiter w = s.head;
            leaveQueue(lane, w);
            then.accept(w);
        }
    }

    /** Takes {@code w} off its queue, its timer and its session; its shared place is given back. */
    void leaveQueue(Lane lane, Waiter w) {
        w.state.unlink(w);
        lane.wheel.cancel(w);
        capacity.removeWaiter();
        capacity.unreserve(w.mode); // a grant from the queue reserves its slot again
        w.session().remove(w);
    }

    /**
     * Withdraws {@code session}'s waiters of {@code owner} from {@code s}'s queue (PROTOCOL.md
     * 15.2): each leaves it and is answered {@code T} at once, then the key settles, which may grant
     * from the head. A waiter granted before is no longer in the queue, so it is untouched.
     *
     * @return how many were withdrawn
     */
    int withdraw(Lane lane, KeyState s, long owner, SessionHandle session, long now) {
        int withdrawn = 0;
        for (Waiter w = s.head; w != null; ) {
            Waiter next = w.nextInQueue; // leaveQueue unlinks w
            if (w.session() == session && w.owner() == owner && w.outcome() == Waiter.Outcome.WAITING) {
                leaveQueue(lane, w);
                w.finish(Waiter.Outcome.TIMED_OUT);
                observer.withdrawn();
                lane.answer(w);
                withdrawn++;
            }
            w = next;
        }
        if (withdrawn > 0) {
            settle(lane, s, now, Waiter.NO_HANDOFF); // a withdrawn head may have held shared waiters back
        }
        return withdrawn;
    }

    // ---------------------------------------------------------------- time (lane lock held)

    /** Runs every timer of every lane that is due, and the end of a recovery grace once per lane. */
    void advance() {
        lanes.forEachLane((lane, now) -> {
            if (!lane.graceSettled && !lanes.inGrace(now)) {
                lane.graceSettled = true;
                for (KeyState s : lane.keys.snapshot()) {
                    Watching.touched(lane, s, Answer.Event.CAUSE_GRACE_END); // G ends: F, or H/S (cause 1)
                    settle(lane, s, now, Waiter.NO_HANDOFF);
                }
            }
            if (lane.wheel.size() > 0) {
                lane.wheel.advance(now, node -> fire(lane, node, now));
            }
            return null;
        });
    }

    /** A timer of {@code lane} is due at {@code now}: a lease end, a delay end or a wait end. */
    private void fire(Lane lane, TimerNode node, long now) {
        if (node instanceof Hold h) {
            if (h.nextEventNanos() - now > 0) {
                lane.wheel.schedule(h, h.nextEventNanos()); // extended since it was armed
            } else {
                settle(lane, h instanceof SharedSlot g ? g.key() : (KeyState) h, now, Waiter.NO_HANDOFF);
            }
        } else if (node instanceof Waiter w && w.outcome() == Waiter.Outcome.WAITING) {
            leaveQueue(lane, w);
            if (w.session().isClosed()) {
                w.finish(Waiter.Outcome.DROPPED);
            } else {
                w.finish(Waiter.Outcome.TIMED_OUT);
                observer.timedOut();
                lane.answer(w);
            }
            settle(lane, w.state, now, Waiter.NO_HANDOFF);
        }
    }
}
