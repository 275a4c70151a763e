package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The lock table: implements the request × key state matrix and the invariants of PROTOCOL.md
 * sections 5 to 7.
 *
 * <h2>Threading</h2>
 * Keys are striped over {@link Lane}s by hash; every mutation of a key happens under its lane's
 * lock, and an operation touches exactly one lane, so I/O threads working on different keys
 * rarely meet. Nothing under a lane lock blocks. Answers owed to waiters are collected while the
 * lock is held and handed to the {@link WaiterNotifier} after it is released. Time-driven events
 * (lease ends, wait ends, the end of a recovery grace) happen when someone calls
 * {@link #advance()}, typically a timer thread every few milliseconds; a lease that has reached
 * its end is also treated as over by every operation on its key before the timer fires.
 *
 * <h2>Invariants</h2>
 * At most one active grant per key; tokens from the {@link TokenSource} strictly increase over
 * all keys; waiters are granted in arrival order and a new Acquire never overtakes a waiter; a
 * lease never ends before its end instant; a waiter never gets {@code T} before its wait ran out;
 * waiters of a closed session are never granted.
 */
public final class LockRegistry {

    /** Timer resolution: T and lease ends come at most about this late (plus the driver's period). */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final Lane[] lanes;
    private final int laneMask;
    private final NanoClock clock;
    private final TokenSource tokens;
    private final LeaseHorizon horizon;
    private final WaiterNotifier notifier;
    private final RegistryObserver observer;
    private final RegistryLimits limits;

    private final AtomicInteger heldKeys = new AtomicInteger();
    private final AtomicInteger waiters = new AtomicInteger();
    private volatile long graceEndNanos;
    private volatile boolean graceActive;
    private volatile boolean draining;

    public LockRegistry(RegistryLimits limits, NanoClock clock, TokenSource tokens, LeaseHorizon horizon,
            WaiterNotifier notifier, RegistryObserver observer) {
        this(limits, clock, tokens, horizon, notifier, observer, defaultLanes());
    }

    LockRegistry(RegistryLimits limits, NanoClock clock, TokenSource tokens, LeaseHorizon horizon,
            WaiterNotifier notifier, RegistryObserver observer, int laneCount) {
        if (Integer.bitCount(laneCount) != 1) {
            throw new IllegalArgumentException("lane count must be a power of two: " + laneCount);
        }
        this.limits = limits;
        this.clock = clock;
        this.tokens = tokens;
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

    private static int defaultLanes() {
        return Integer.highestOneBit(Math.max(16, Runtime.getRuntime().availableProcessors() * 8) * 2 - 1);
    }

    // ---------------------------------------------------------------- requests

    /**
     * Decides an Acquire at its receipt.
     *
     * @param receiptNanos when the whole frame was decoded (the start of {@code wait} and of queued_ms)
     * @param session the requesting session; its queued Acquires die with it
     */
    public AcquireResult acquire(byte[] key, int waitSeconds, int leaseSeconds, long owner, long receiptNanos,
            SessionHandle session) {
        if (draining) {
            return busy(BusyReason.DRAINING);
        }
        int hash = KeyTable.hash(key);
        Lane lane = lanes[hash & laneMask];
        List<Waiter> answers = null;
        AcquireResult result;
        lane.lock.lock();
        try {
            long now = lane.now(clock);
            KeyState s = lane.keys.get(key, hash);
            if (s != null) {
                answers = settle(lane, s, now, answers);
            }
            boolean free = (s == null || (!s.isHeld() && s.head == null)) && !inGrace(now);
            if (draining) {
                // Checked again under the lane lock: drain() sets the flag before it sweeps each
                // lane, so an Acquire racing with it is either swept or refused here, never left queued.
                result = busy(BusyReason.DRAINING);
            } else if (free) {
                if (s == null || !lane.keys.contains(s)) {
                    s = new KeyState(key, hash);
                }
                result = grantNow(lane, s, now, leaseSeconds, owner, receiptNanos, session);
                if (result instanceof AcquireResult.Queued deferred) {
                    answers = append(answers, deferred.waiter()); // delivered when the horizon covers it
                }
            } else if (waitSeconds == 0) {
                observer.timedOut();
                result = AcquireResult.TIMED_OUT;
            } else {
                if (s == null || !lane.keys.contains(s)) {
                    s = new KeyState(key, hash); // queued on a key held by the recovery grace
                }
                result = enqueue(lane, s, owner, waitSeconds, leaseSeconds, receiptNanos, session);
            }
        } finally {
            lane.lock.unlock();
        }
        deliver(answers);
        return result;
    }

    /** Release of the grant with {@code token}: {@code R} if it was the key's active grant, else {@code N}. */
    public ReleaseResult release(byte[] key, long token) {
        int hash = KeyTable.hash(key);
        Lane lane = lanes[hash & laneMask];
        List<Waiter> answers = null;
        ReleaseResult result = ReleaseResult.NOT_HELD;
        lane.lock.lock();
        try {
            long now = lane.now(clock);
            KeyState s = lane.keys.get(key, hash);
            if (s != null) {
                answers = settle(lane, s, now, answers);
                if (s.isHeld() && s.token == token) {
                    observer.ended(now - s.grantNanos, false);
                    s.token = 0;
                    lane.wheel.cancel(s);
                    answers = settle(lane, s, now, answers);
                    result = ReleaseResult.RELEASED;
                }
            }
        } finally {
            lane.lock.unlock();
        }
        observer.released(result);
        deliver(answers);
        return result;
    }

    /**
     * Extends the grant with {@code token} so that its lease ends no earlier than
     * {@code now + leaseSeconds} (an Extend never shortens a lease).
     */
    public ExtendResult extend(byte[] key, long token, int leaseSeconds) {
        int hash = KeyTable.hash(key);
        Lane lane = lanes[hash & laneMask];
        List<Waiter> answers = null;
        ExtendResult result = ExtendResult.NOT_HELD;
        lane.lock.lock();
        try {
            long now = lane.now(clock);
            KeyState s = lane.keys.get(key, hash);
            if (s != null) {
                answers = settle(lane, s, now, answers);
                if (s.isHeld() && s.token == token) {
                    long end = Math.max(s.leaseEndNanos, now + TimeUnit.SECONDS.toNanos(leaseSeconds));
                    LeaseHorizon.Approval approval = horizon.approve(now, end);
                    if (approval != LeaseHorizon.Approval.REFUSED) {
                        // The wheel still holds the old end; when it fires it sees the new one and re-arms.
                        // AFTER_WRITE: extended now, answered once the horizon covers it (the caller waits).
                        s.leaseEndNanos = end;
                        result = approval == LeaseHorizon.Approval.ON_DISK ? ExtendResult.EXTENDED
                                : ExtendResult.EXTENDED_AFTER_WRITE;
                    } else {
                        // The longer lease is not on disk (the data directory is failing, or the
                        // server is stopping), so it cannot be promised across a restart. E would
                        // be a lie; N makes the client stop acting as holder. The grant keeps its
                        // current end (the client's earlier validity is still honoured), so it is
                        // not released here: the key frees when that end comes.
                        result = ExtendResult.NOT_HELD;
                    }
                }
            }
        } finally {
            lane.lock.unlock();
        }
        observer.extended(result);
        deliver(answers);
        return result;
    }

    /**
     * Drops every Acquire still queued by {@code session}, without answers, and marks the
     * session closed so none of them can be granted from now on. Its grants are untouched.
     */
    public void closeSession(SessionHandle session) {
        List<Waiter> dropped = session.close();
        List<Waiter> answers = null;
        for (Waiter w : dropped) {
            Lane lane = lanes[w.state.hash & laneMask];
            lane.lock.lock();
            try {
                if (w.outcome() == Waiter.Outcome.WAITING) {
                    leaveQueue(lane, w);
                    w.finish(Waiter.Outcome.DROPPED);
                    answers = settle(lane, w.state, lane.now(clock), answers);
                }
            } finally {
                lane.lock.unlock();
            }
        }
        deliver(answers);
    }

    /**
     * Runs {@code then} once every lease granted or extended so far is covered by the stored
     * lease horizon: at once if it is, else on the horizon store's thread after its write. For
     * an {@link ExtendResult#EXTENDED_AFTER_WRITE} answer.
     */
    public void whenLeasesDurable(LeaseHorizon.Durable then) {
        horizon.whenDurable(then);
    }

    // ---------------------------------------------------------------- time and lifecycle

    /** Processes every lease end, wait end and grace end that is due. Call every few milliseconds. */
    public void advance() {
        for (Lane lane : lanes) {
            List<Waiter> answers = null;
            lane.lock.lock();
            try {
                long now = lane.now(clock);
                if (!lane.graceSettled && !inGrace(now)) {
                    lane.graceSettled = true;
                    for (KeyState s : lane.keys.snapshot()) {
                        answers = settle(lane, s, now, answers);
                    }
                }
                if (lane.wheel.size() > 0) {
                    Fired fired = new Fired(lane, now);
                    lane.wheel.advance(now, fired::fire);
                    answers = append(answers, fired.answers);
                }
            } finally {
                lane.lock.unlock();
            }
            deliver(answers);
        }
    }

    /**
     * Holds every key as if granted until {@code endNanos} (the recovery grace after a restart):
     * wait=0 gets {@code T}, wait&gt;0 queues and is granted when the grace ends.
     * Call before serving requests.
     */
    public void holdAllUntil(long endNanos) {
        graceEndNanos = endNanos;
        graceActive = true;
        for (Lane lane : lanes) {
            lane.lock.lock();
            try {
                lane.graceSettled = false;
            } finally {
                lane.lock.unlock();
            }
        }
    }

    /** Remaining recovery grace in nanoseconds, 0 when none. */
    public long graceRemainingNanos() {
        if (!graceActive) {
            return 0;
        }
        long left = graceEndNanos - clock.nanoTime();
        return Math.max(0, left);
    }

    /** Answers {@code B} to every queued Acquire and to every Acquire from now on (shutdown). */
    public void drain() {
        draining = true;
        for (Lane lane : lanes) {
            List<Waiter> answers = null;
            lane.lock.lock();
            try {
                long now = lane.now(clock);
                for (KeyState s : lane.keys.snapshot()) {
                    while (s.head != null) {
                        Waiter w = s.head;
                        leaveQueue(lane, w);
                        if (w.session().isClosed()) {
                            w.finish(Waiter.Outcome.DROPPED);
                        } else {
                            w.busy(BusyReason.DRAINING);
                            observer.busy(BusyReason.DRAINING);
                            answers = append(answers, w);
                        }
                    }
                    answers = settle(lane, s, now, answers);
                }
            } finally {
                lane.lock.unlock();
            }
            deliver(answers);
        }
    }

    public boolean isDraining() {
        return draining;
    }

    /** Keys with an active grant (counted when granted, uncounted when released or expired). */
    public int heldKeys() {
        return heldKeys.get();
    }

    /** Acquires waiting in any queue. */
    public int waiters() {
        return waiters.get();
    }

    /** The longest queue right now. Walks every key: for gauges scraped every few seconds, not hot paths. */
    public int longestQueue() {
        int max = 0;
        for (Lane lane : lanes) {
            lane.lock.lock();
            try {
                for (KeyState s : lane.keys.snapshot()) {
                    max = Math.max(max, s.waiters);
                }
            } finally {
                lane.lock.unlock();
            }
        }
        return max;
    }

    // ---------------------------------------------------------------- internals (lane lock held)

    private AcquireResult grantNow(Lane lane, KeyState s, long now, int leaseSeconds, long owner, long receiptNanos,
            SessionHandle session) {
        long leaseEnd = now + TimeUnit.SECONDS.toNanos(leaseSeconds);
        BusyReason refused = takeGrant(lane, s, now, leaseEnd);
        if (refused != null) {
            uncountIfFree(s);
            return busy(refused);
        }
        observer.granted(0, false);
        if (lane.grantAwaitsHorizon) {
            // Granted now; the A goes out through the notifier once the horizon covers the lease.
            Waiter w = new Waiter(owner, leaseSeconds, receiptNanos, session, s);
            w.granted(s.token, now);
            w.awaitHorizon();
            return new AcquireResult.Queued(w);
        }
        return new AcquireResult.Granted(s.token);
    }

    /**
     * Makes {@code s} held by a new grant, or says why it cannot be. A key is counted against
     * {@code max-held-keys} from its first grant until it has no grant left, so a hand-off from a
     * releaser to a waiter never competes with other keys for the slot.
     */
    private BusyReason takeGrant(Lane lane, KeyState s, long now, long leaseEnd) {
        if (!s.countedHeld) {
            if (!tryIncrement(heldKeys, limits.maxHeldKeys())) {
                return BusyReason.HELD_KEYS;
            }
            s.countedHeld = true;
        }
        LeaseHorizon.Approval approval = horizon.approve(now, leaseEnd);
        if (approval == LeaseHorizon.Approval.REFUSED) {
            return BusyReason.STORAGE;
        }
        long token = tokens.next();
        if (token == TokenSource.NONE) {
            return BusyReason.STORAGE;
        }
        lane.grantAwaitsHorizon = approval == LeaseHorizon.Approval.AFTER_WRITE;
        s.token = token;
        s.grantNanos = now;
        s.leaseEndNanos = leaseEnd;
        lane.wheel.schedule(s, leaseEnd);
        lane.keys.putIfAbsent(s);
        return null;
    }

    private AcquireResult enqueue(Lane lane, KeyState s, long owner, int waitSeconds, int leaseSeconds,
            long receiptNanos, SessionHandle session) {
        if (s.waiters >= limits.maxWaitersPerKey()) {
            return busy(BusyReason.KEY_QUEUE);
        }
        if (!tryIncrement(waiters, limits.maxWaitersTotal())) {
            return busy(BusyReason.TOTAL_WAITERS);
        }
        Waiter w = new Waiter(owner, leaseSeconds, receiptNanos, session, s);
        if (session.isClosed()) {
            waiters.decrementAndGet();
            w.finish(Waiter.Outcome.DROPPED); // no answer is owed to a closed session
            return new AcquireResult.Queued(w);
        }
        if (!session.tryAdd(w, limits.maxPendingPerSession())) {
            waiters.decrementAndGet();
            return busy(BusyReason.SESSION);
        }
        s.enqueue(w);
        lane.keys.putIfAbsent(s);
        lane.wheel.schedule(w, receiptNanos + TimeUnit.SECONDS.toNanos(waitSeconds));
        return new AcquireResult.Queued(w);
    }

    /**
     * Brings a key up to date at {@code now}: ends a lease that has run out, grants to the head
     * of the queue when there is no grant (and no recovery grace), and forgets a FREE key.
     */
    private List<Waiter> settle(Lane lane, KeyState s, long now, List<Waiter> answers) {
        if (s.isHeld() && s.leaseOver(now)) {
            observer.ended(s.leaseEndNanos - s.grantNanos, true);
            s.token = 0;
            lane.wheel.cancel(s);
        }
        while (!s.isHeld() && s.head != null && !inGrace(now)) {
            Waiter w = s.head;
            leaveQueue(lane, w);
            if (w.session().isClosed()) {
                w.finish(Waiter.Outcome.DROPPED);
                continue;
            }
            long leaseEnd = now + TimeUnit.SECONDS.toNanos(w.leaseSeconds());
            BusyReason refused = takeGrant(lane, s, now, leaseEnd);
            if (refused != null) {
                w.busy(refused);
                observer.busy(refused);
            } else {
                w.granted(s.token, now);
                if (lane.grantAwaitsHorizon) {
                    w.awaitHorizon();
                }
                observer.granted(now - w.receiptNanos(), true);
            }
            answers = append(answers, w);
        }
        if (!s.isHeld()) {
            uncountIfFree(s);
            if (s.head == null) {
                lane.keys.remove(s); // by identity: a no-op if s is not (or no longer) in the table
            }
        }
        return answers;
    }

    private void uncountIfFree(KeyState s) {
        if (s.countedHeld && !s.isHeld()) {
            s.countedHeld = false;
            heldKeys.decrementAndGet();
        }
    }

    private void leaveQueue(Lane lane, Waiter w) {
        w.state.unlink(w);
        lane.wheel.cancel(w);
        waiters.decrementAndGet();
        w.session().remove(w);
    }

    private AcquireResult busy(BusyReason reason) {
        observer.busy(reason);
        return new AcquireResult.Busy(reason);
    }

    private boolean inGrace(long now) {
        return graceActive && now - graceEndNanos < 0;
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
                later = append(later, w);
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

    private static List<Waiter> append(List<Waiter> list, Waiter w) {
        if (list == null) {
            list = new ArrayList<>(4);
        }
        list.add(w);
        return list;
    }

    private static List<Waiter> append(List<Waiter> list, List<Waiter> more) {
        if (more == null) {
            return list;
        }
        if (list == null) {
            return more;
        }
        list.addAll(more);
        return list;
    }

    private static boolean tryIncrement(AtomicInteger counter, int limit) {
        while (true) {
            int n = counter.get();
            if (n >= limit) {
                return false;
            }
            if (counter.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Timer callbacks of one {@link #advance()} pass over one lane. */
    private final class Fired {
        private final Lane lane;
        private final long now;
        List<Waiter> answers;

        Fired(Lane lane, long now) {
            this.lane = lane;
            this.now = now;
        }

        void fire(TimerNode node) {
            if (node instanceof KeyState s) {
                if (s.isHeld() && !s.leaseOver(now)) {
                    lane.wheel.schedule(s, s.leaseEndNanos); // extended since it was armed
                } else {
                    answers = settle(lane, s, now, answers);
                }
            } else if (node instanceof Waiter w && w.outcome() == Waiter.Outcome.WAITING) {
                leaveQueue(lane, w);
                if (w.session().isClosed()) {
                    w.finish(Waiter.Outcome.DROPPED);
                } else {
                    w.finish(Waiter.Outcome.TIMED_OUT);
                    observer.timedOut();
                    answers = append(answers, w);
                }
                answers = settle(lane, w.state, now, answers);
            }
        }
    }
}
