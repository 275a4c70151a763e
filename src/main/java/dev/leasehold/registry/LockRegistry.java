package dev.leasehold.registry;

import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

import dev.leasehold.protocol.HoldMode;

/**
 * The lock table: implements the request × key state matrix and the invariants of PROTOCOL.md
 * sections 5 to 7 and 12 to 15, for every {@link HoldMode}.
 *
 * <h2>Shape</h2>
 * This class is the facade: the request entry points, each one lane operation. Behind it:
 * <ul>
 * <li>{@link KeyState} and {@link Hold}: one key's holds, queue and rules, a deterministic state
 *     machine (time and the next token are inputs, decisions come back as values);</li>
 * <li>{@link Lanes}: the keys striped over lanes and the one way into a lane, with the drain and
 *     grace switches;</li>
 * <li>{@link KeyMachine}: the machinery under a lane's lock (settle, grant, queue, timers),
 *     written once for every mode;</li>
 * <li>{@link Capacity}: the counts over all keys and the limits they are held to;</li>
 * <li>{@link Takeover}: grace, drain, and a cluster leader's promotion and reset;</li>
 * <li>{@link KeyScan}: inspect, top and the walks for gauges and a graceful stop.</li>
 * </ul>
 *
 * <h2>Threading</h2>
 * Keys are striped over lanes by hash; every mutation of a key happens under its lane's lock, and
 * a request touches exactly one lane, so I/O threads working on different keys rarely meet.
 * Nothing under a lane lock blocks. Answers owed to waiters are collected while the lock is held
 * and handed to the {@link WaiterNotifier} after it is released. Time-driven events (lease ends,
 * delay ends, wait ends, the end of a recovery grace) happen when someone calls {@link #advance()},
 * typically a timer thread every few milliseconds; a lease that has reached its end is also
 * treated as over by every operation on its key before the timer fires.
 *
 * <h2>Invariants</h2>
 * A key's holds are one exclusive grant, or shared grants of one mode within its limit (13.2),
 * never both; tokens from the {@link TokenSource} strictly increase over all keys; waiters are
 * granted in arrival order, whatever their mode, and a new acquire never overtakes a waiter; a
 * lease never ends before its end instant; a waiter never gets {@code T} before its wait ran out,
 * unless its own session withdrew it ({@link #withdraw}); waiters of a closed session are never
 * granted. A wait is timed in milliseconds whatever unit its frame carried ({@code A} and
 * {@code S} whole seconds, {@code M} milliseconds).
 */
public final class LockRegistry {

    /** Timer resolution: T and lease ends come at most about this late (plus the driver's period). */
    static final long TICK_NANOS = Lanes.TICK_NANOS;

    private final Lanes lanes;
    private final KeyMachine machine;
    private final Capacity capacity;
    private final Takeover takeover;
    private final KeyScan scan;
    private final LeaseHorizon horizon;
    private final RegistryObserver observer;
    private final DecisionLog decisions;
    private final RegistryLimits limits;

    public LockRegistry(RegistryLimits limits, NanoClock clock, TokenSource tokens, LeaseHorizon horizon,
            WaiterNotifier notifier, RegistryObserver observer) {
        this(limits, clock, tokens, horizon, notifier, observer, DecisionLog.NONE, defaultLanes());
    }

    /** @param decisions receives every state-changing decision (cluster mode), or {@link DecisionLog#NONE} */
    public LockRegistry(RegistryLimits limits, NanoClock clock, TokenSource tokens, LeaseHorizon horizon,
            WaiterNotifier notifier, RegistryObserver observer, DecisionLog decisions) {
        this(limits, clock, tokens, horizon, notifier, observer, decisions, defaultLanes());
    }

    LockRegistry(RegistryLimits limits, NanoClock clock, TokenSource tokens, LeaseHorizon horizon,
            WaiterNotifier notifier, RegistryObserver observer, int laneCount) {
        this(limits, clock, tokens, horizon, notifier, observer, DecisionLog.NONE, laneCount);
    }

    private LockRegistry(RegistryLimits limits, NanoClock clock, TokenSource tokens, LeaseHorizon horizon,
            WaiterNotifier notifier, RegistryObserver observer, DecisionLog decisions, int laneCount) {
        this.limits = limits;
        this.horizon = horizon;
        this.observer = observer;
        this.decisions = decisions;
        this.capacity = new Capacity(limits);
        this.lanes = new Lanes(laneCount, clock, horizon, notifier, observer);
        this.machine = new KeyMachine(lanes, limits, tokens, horizon, observer, decisions, capacity);
        this.takeover = new Takeover(lanes, machine, capacity, observer);
        this.scan = new KeyScan(lanes, machine);
    }

    private static int defaultLanes() {
        return Integer.highestOneBit(Math.max(16, Runtime.getRuntime().availableProcessors() * 8) * 2 - 1);
    }

    // ---------------------------------------------------------------- requests

    /**
     * Decides an acquire in {@code mode} at its receipt: {@code L} if the key's shared holds use
     * another limit (a shared mode only, PROTOCOL.md 13.2), else a grant, {@code T}, {@code B} or
     * a place in the key's queue. The one way in for every acquire: {@code A}, {@code S} and
     * {@code M} differ only in the mode and in the unit their frame carries the wait in.
     *
     * @param mode exclusive ({@code A}, an exclusive {@code M}), read or permits ({@code S}, a shared {@code M})
     * @param waitMillis how long it may wait in the key's queue, from receipt; 0 never queues
     * @param receiptNanos when the whole frame was decoded (the start of the wait and of queued_ms)
     * @param session the requesting session; its queued acquires die with it
     * @throws IllegalArgumentException if a semaphore's permits are above {@code maxSharedPerKey}
     *         (the decoder answers {@code X 3} before this)
     */
    public AcquireResult acquire(byte[] key, HoldMode mode, long waitMillis, int leaseSeconds, long owner,
            long receiptNanos, SessionHandle session) {
        return acquire(key, mode, waitMillis, leaseSeconds, owner, receiptNanos, session, null);
    }

    /**
     * As {@link #acquire(byte[], HoldMode, long, int, long, long, SessionHandle)}, for an {@code M}
     * carrying the grant's value (PROTOCOL.md 17.2): the grant, now or when granted from the queue,
     * has it; a queued acquire's value is shown nowhere until then.
     *
     * @param value at most {@code max-value-bytes} (the decoder checked it); null or empty for none;
     *        an exclusive {@code mode} only
     */
    public AcquireResult acquire(byte[] key, HoldMode mode, long waitMillis, int leaseSeconds, long owner,
            long receiptNanos, SessionHandle session, byte[] value) {
        byte[] v = value == null || value.length == 0 ? null : value;
        if (v != null && mode.isShared()) {
            throw new IllegalArgumentException("a value on a shared acquire (the decoder answers X 3 before this)");
        }
        if (mode.isShared() && mode.limit() > limits.maxSharedPerKey()) {
            throw new IllegalArgumentException("shared limit " + mode.limit()
                    + " is above leasehold.max-shared-holders-per-key (" + limits.maxSharedPerKey() + ")");
        }
        if (lanes.isDraining()) {
            return machine.busy(BusyReason.DRAINING);
        }
        return machine.onKey(key, (lane, s, hash, now) -> machine.acquire(lane, s, key, hash, now, mode, waitMillis,
                leaseSeconds, owner, receiptNanos, session, v));
    }

    /**
     * Withdraw (PROTOCOL.md section 15): every acquire of {@code session} with {@code owner} still
     * queued on {@code key} leaves the queue and is answered {@code T} through the
     * {@link WaiterNotifier} at once; the key then settles as when a wait runs out, which may grant
     * from the head. An acquire granted first (its {@code A} sent or still to be sent), answered,
     * unknown, or queued by another session is untouched. Nothing is logged: waiters are not
     * replicated (15.6). Works the same during a recovery grace.
     *
     * @return how many acquires were withdrawn (the {@code W} itself has no answer)
     */
    public int withdraw(byte[] key, long owner, SessionHandle session) {
        return machine.onKey(key, (lane, s, hash, now) -> s == null ? 0 : machine.withdraw(lane, s, owner, session, now));
    }

    /** Release of the grant with {@code token}: {@code R} if it is an active grant of the key, else {@code N}. */
    public ReleaseResult release(byte[] key, long token) {
        return release(key, token, Waiter.NO_HANDOFF);
    }

    /**
     * As {@link #release(byte[], long)}; a waiter this Release grants carries {@code readNanos}
     * as its {@link Waiter#handoffStartNanos()}, so the server can time the hand-off up to the
     * waiter's {@code A} being written.
     *
     * @param readNanos when the server read the Release (this registry's clock)
     */
    public ReleaseResult release(byte[] key, long token, long readNanos) {
        ReleaseResult result = machine.onKey(key, (lane, s, hash, now) -> {
            decisions.released(key, token);
            Hold h = s == null ? null : s.activeHold(token);
            if (h == null) {
                return ReleaseResult.NOT_HELD;
            }
            observer.ended(h.mode(), now - h.grantNanos, false);
            machine.endGrant(lane, s, h);
            machine.settle(lane, s, now, readNanos);
            return ReleaseResult.RELEASED;
        });
        observer.released(result);
        return result;
    }

    /**
     * Set value ({@code V}, PROTOCOL.md section 17): if {@code token} is the key's active exclusive
     * grant (settled first, as for a Release: at or after its lease end it is not), its value
     * becomes {@code value} ({@code V}); else {@code N}. In cluster mode the decision is logged
     * either way and its answer waits for that commit.
     *
     * @param value at most {@code max-value-bytes}; empty clears it
     */
    public ValueResult setValue(byte[] key, long token, byte[] value) {
        return machine.onKey(key, (lane, s, hash, now) -> machine.setValue(lane, s, key, token, value));
    }

    /**
     * Extends the grant with {@code token} so that its lease ends no earlier than
     * {@code now + leaseSeconds} (an Extend never shortens a lease).
     */
    public ExtendResult extend(byte[] key, long token, int leaseSeconds) {
        ExtendResult result = machine.onKey(key, (lane, s, hash, now) -> {
            decisions.extended(key, token, leaseSeconds);
            Hold h = s == null ? null : s.activeHold(token);
            if (h == null) {
                return ExtendResult.NOT_HELD;
            }
            long end = h.extendedEnd(now, TimeUnit.SECONDS.toNanos(leaseSeconds));
            LeaseHorizon.Approval approval = horizon.approve(now, end);
            if (approval == LeaseHorizon.Approval.REFUSED) {
                // The longer lease is not on disk (the data directory is failing, or the
                // server is stopping), so it cannot be promised across a restart. E would
                // be a lie; N makes the client stop acting as holder. The grant keeps its
                // current end (the client's earlier validity is still honoured), so it is
                // not released here: the key frees when that end comes.
                return ExtendResult.NOT_HELD;
            }
            // The wheel still holds the old end; when it fires it sees the new one and re-arms.
            // AFTER_WRITE: extended now, answered once the horizon covers it (the caller waits).
            h.extendTo(end, leaseSeconds);
            return approval == LeaseHorizon.Approval.ON_DISK ? ExtendResult.EXTENDED : ExtendResult.EXTENDED_AFTER_WRITE;
        });
        observer.extended(result);
        return result;
    }

    /**
     * Check of {@code token} (PROTOCOL.md section 11): true ({@code C}) if it is an active grant of
     * the key now, false ({@code N}) otherwise. Changes nothing: a lease that has reached its end
     * is settled as every operation on the key settles it, and that expiry is the only effect. In
     * cluster mode the Check is logged as a no-op, so its answer waits for a commit made after it.
     */
    public boolean check(byte[] key, long token) {
        boolean current = machine.onKey(key, (lane, s, hash, now) -> {
            decisions.checked(key, token);
            return s != null && s.activeHold(token) != null;
        });
        observer.checked(current);
        return current;
    }

    /**
     * Starts watch {@code w} on {@code key} (PROTOCOL.md section 16): {@code w} is told its first
     * event (the key's state now, cause 0) and then every change of the key, each through
     * {@link Watch#decided} under the key's lane lock. In cluster mode a no-op is logged first
     * ({@link DecisionLog#observed}), whose commit the first event waits for (16.8).
     *
     * @return false if nothing was started: the cluster's replication queue is full ({@code B})
     */
    public boolean watch(byte[] key, Watch w) {
        return machine.onKey(key, (lane, s, hash, now) -> {
            if (!decisions.observed(key)) {
                return false;
            }
            KeyState k = s != null ? s : new KeyState(key, hash);
            lane.keys.putIfAbsent(k);
            Watching.add(lane, k, w, lanes.inGrace(now));
            return true;
        });
    }

    /**
     * Ends watch {@code w}: it is told nothing more. A FREE key whose last watch this was is
     * forgotten. Harmless for a watch that has ended, or whose key a {@link #reset} forgot.
     */
    public void unwatch(Watch w) {
        KeyState k = w.key; // set under the lane lock by watch(), on the thread that now ends it
        if (k == null) {
            return;
        }
        lanes.inLane(lanes.laneOf(k.hash), (lane, now) -> {
            if (w.key == k) {
                Watching.remove(w);
                if (k.watchFirst == null && k.isFree()) {
                    capacity.uncountKeyIfFree(k);
                    lane.keys.remove(k); // by identity: a no-op if a reset forgot it
                }
            }
            return null;
        });
    }

    /**
     * Drops every acquire still queued by {@code session}, without answers, and marks the
     * session closed so none of them can be granted from now on. Its grants are untouched.
     */
    public void closeSession(SessionHandle session) {
        for (Waiter w : session.close()) {
            lanes.inLane(lanes.laneOf(w.state.hash), (lane, now) -> {
                if (w.outcome() == Waiter.Outcome.WAITING) {
                    machine.leaveQueue(lane, w);
                    w.finish(Waiter.Outcome.DROPPED);
                    machine.settle(lane, w.state, now, Waiter.NO_HANDOFF);
                }
                return null;
            });
        }
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

    /** Processes every lease end, delay end, wait end and grace end that is due. Call every few milliseconds. */
    public void advance() {
        machine.advance();
    }

    /**
     * Holds every key as if granted until {@code endNanos} (the recovery grace after a restart):
     * wait=0 gets {@code T}, wait&gt;0 queues and is granted when the grace ends.
     * Call before serving requests.
     */
    public void holdAllUntil(long endNanos) {
        lanes.holdAllUntil(endNanos);
    }

    /** Remaining recovery grace in nanoseconds, 0 when none. */
    public long graceRemainingNanos() {
        return lanes.graceRemainingNanos();
    }

    /** Answers {@code B} to every queued acquire and to every acquire from now on (shutdown). */
    public void drain() {
        takeover.drain();
    }

    /**
     * Cluster mode, on a new leader (PROTOCOL.md section 10): installs the committed holds, each
     * active grant running for its longest requested lease plus {@code extraNanos} (the election
     * timeout) from now, so no lease a previous leader granted can end early, and each lock-delay
     * whole again. Nothing is logged: these holds are already in the replicated table. Call on an
     * empty registry ({@link #reset()}).
     */
    public void promote(List<HeldGrant> held, long extraNanos) {
        takeover.promote(held, extraNanos);
    }

    /**
     * Cluster mode, when this node stops serving: forgets every key, hold and waiter (waiters
     * are dropped without an answer; their sessions are being closed with {@code X 9}) and ends
     * a drain, so the registry is ready for the next {@link #promote}.
     */
    public void reset() {
        takeover.reset();
    }

    public boolean isDraining() {
        return lanes.isDraining();
    }

    // ---------------------------------------------------------------- gauges and looks

    /**
     * The latest end (monotonic nanos) of the leases held now, exclusive or shared, or empty when
     * none is: what a graceful stop must protect across the restart (released and expired leases
     * need nothing). Walks every key under its lane's lock; for the stop, not for a hot path.
     */
    public OptionalLong latestHeldLeaseEnd() {
        return scan.latestHeldLeaseEnd();
    }

    /** Keys with an active grant (counted when granted, uncounted when released or expired). */
    public int heldKeys() {
        return capacity.heldKeys();
    }

    /**
     * Keys in lock-delay now (PROTOCOL.md section 12): their lease expired less than the
     * lock-delay ago, and they are granted to nobody until it ends. Each keeps its
     * max-held-keys slot meanwhile, so their number is bounded like held keys.
     */
    public int delayedKeys() {
        return capacity.delayedKeys();
    }

    /** Acquires waiting in any queue. */
    public int waiters() {
        return capacity.waiters();
    }

    /** Shared slots plus shared waiters over all keys (bounded by {@code max-shared-total}). */
    public int sharedTotal() {
        return capacity.sharedTotal();
    }

    /** Active shared grants over all keys (delayed shared slots not counted). */
    public int sharedHeld() {
        return capacity.sharedHeld();
    }

    /** {@code leasehold.max-shared-holders-per-key}: the largest shared limit ({@code X 3} above it). */
    public int maxSharedPerKey() {
        return limits.maxSharedPerKey();
    }

    /** The longest queue right now. Walks every key: for gauges scraped every few seconds, not hot paths. */
    public int longestQueue() {
        return scan.longestQueue();
    }

    /**
     * What an operator sees of one key now (the {@code locks} endpoint, {@code leasehold
     * inspect}): one lane lock for a few field reads and the first {@code maxWaits} waiters, so
     * it costs a grant no more than a Check does. Settles the key first, as every request does.
     *
     * @param maxWaits how many of the oldest waiters' remaining waits to report
     */
    public KeyView inspect(byte[] key, int maxWaits) {
        return scan.inspect(key, maxWaits);
    }

    /**
     * The {@code n} keys with the longest queues and the {@code n} held longest, for operators.
     * Walks every key, so it is for a diagnostic thread, never an event loop nor the timer
     * thread: each lane is scanned {@code chunk} table slots per lock hold, and the lock is let
     * go between chunks, and early (after 64 slots) whenever a request is waiting for it, so a
     * grant on the same lane waits for at most 64 slots' scan (about a microsecond), not for
     * the whole lane. The price: keys that move between chunks may be missed or seen twice (the
     * result is deduplicated); each key shown is then read again, consistently, as by
     * {@link #inspect}.
     */
    public TopKeys top(int n, int chunk, int maxWaits) {
        return top(n, chunk, maxWaits, () -> { });
    }

    /**
     * As {@link #top(int, int, int)}, running {@code betweenChunks} after each chunk with no lane
     * lock held: the caller's pacing (the endpoint leaves the CPU to the event loops there).
     */
    public TopKeys top(int n, int chunk, int maxWaits, Runnable betweenChunks) {
        return scan.top(n, chunk, maxWaits, betweenChunks);
    }

}
