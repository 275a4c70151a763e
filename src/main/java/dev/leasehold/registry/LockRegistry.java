package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The lock table: implements the request × key state matrix and the invariants of PROTOCOL.md
 * sections 5 to 7.
 *
 * <h2>Shape</h2>
 * The per-key transitions live in {@link KeyState}, a deterministic state machine (time and the
 * next token are inputs, decisions come back as values). This class is the concurrent shell
 * around it: lanes and their locks ({@link #onKey}/{@link #inLane}, the one place a lane is
 * entered), the limits shared by all keys, the timer wheel, the token source, the lease
 * horizon, the {@link DecisionLog} and the delivery of answers owed to waiters.
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
    private final DecisionLog decisions;

    /** Keys counted against max-held-keys: held, or in lock-delay. */
    private final AtomicInteger heldKeys = new AtomicInteger();
    private final AtomicInteger delayedKeys = new AtomicInteger();
    private final AtomicInteger waiters = new AtomicInteger();
    /** Shared slots plus shared waiters over all keys, bounded by {@code max-shared-total}. */
    private final AtomicInteger sharedTotal = new AtomicInteger();
    /** Active shared grants (not delayed slots), for the gauge. */
    private final AtomicInteger sharedHeld = new AtomicInteger();
    private volatile long graceEndNanos;
    private volatile boolean graceActive;
    private volatile boolean draining;

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
        if (Integer.bitCount(laneCount) != 1) {
            throw new IllegalArgumentException("lane count must be a power of two: " + laneCount);
        }
        this.limits = limits;
        this.clock = clock;
        this.tokens = tokens;
        this.horizon = horizon;
        this.notifier = notifier;
        this.observer = observer;
        this.decisions = decisions;
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
        return onKey(key, (lane, s, hash, now) -> {
            if (draining) {
                // Checked again under the lane lock: drain() sets the flag before it sweeps each
                // lane, so an Acquire racing with it is either swept or refused here, never left queued.
                return busy(BusyReason.DRAINING);
            }
            KeyState k = s != null ? s : new KeyState(key, hash);
            return switch (k.admit(waitSeconds, inGrace(now))) {
                case GRANT -> {
                    AcquireResult r = grantNow(lane, k, now, leaseSeconds, owner, receiptNanos, session);
                    if (r instanceof AcquireResult.Queued deferred) {
                        lane.answer(deferred.waiter()); // delivered when the horizon covers it
                    }
                    yield r;
                }
                case TIMED_OUT -> {
                    observer.timedOut();
                    yield AcquireResult.TIMED_OUT;
                }
                case ENQUEUE -> enqueue(lane, k, owner, waitSeconds, leaseSeconds, receiptNanos, session);
                case MISMATCH -> throw new IllegalStateException("an exclusive Acquire has no limit");
            };
        });
    }

    /**
     * Decides a shared acquire ({@code S}, PROTOCOL.md section 13) at its receipt: {@code L} if
     * the key's shared holds use another limit, else as {@link #acquire} with shared slots.
     *
     * @param limit 0 for a read lock, else the semaphore's permits; at most {@code maxSharedPerKey}
     * @throws IllegalArgumentException if {@code limit} is outside 0..maxSharedPerKey (the
     *         decoder answers {@code X 3} before this)
     */
    public AcquireResult acquireShared(byte[] key, int waitSeconds, int leaseSeconds, long owner, int limit,
            long receiptNanos, SessionHandle session) {
        if (limit < 0 || limit > limits.maxSharedPerKey()) {
            throw new IllegalArgumentException("shared limit " + limit
                    + " is above leasehold.max-shared-holders-per-key (" + limits.maxSharedPerKey() + ")");
        }
        if (draining) {
            return busy(BusyReason.DRAINING);
        }
        return onKey(key, (lane, s, hash, now) -> {
            if (draining) {
                return busy(BusyReason.DRAINING);
            }
            KeyState k = s != null ? s : new KeyState(key, hash);
            return switch (k.admitShared(limit, limits.sharedSlots(limit), waitSeconds, inGrace(now))) {
                case MISMATCH -> {
                    observer.limitMismatch();
                    yield new AcquireResult.LimitMismatch(k.sharedLimit);
                }
                case GRANT -> {
                    if (!tryIncrement(sharedTotal, limits.maxSharedTotal())) {
                        yield busy(BusyReason.SHARED_TOTAL);
                    }
                    AcquireResult r = grantSharedNow(lane, k, now, leaseSeconds, owner, limit, receiptNanos, session);
                    if (r instanceof AcquireResult.Busy) {
                        sharedTotal.decrementAndGet();
                    } else if (r instanceof AcquireResult.Queued deferred) {
                        lane.answer(deferred.waiter());
                    }
                    yield r;
                }
                case TIMED_OUT -> {
                    observer.timedOut();
                    yield AcquireResult.TIMED_OUT;
                }
                case ENQUEUE -> {
                    if (!tryIncrement(sharedTotal, limits.maxSharedTotal())) {
                        yield busy(BusyReason.SHARED_TOTAL);
                    }
                    AcquireResult r = enqueue(lane, k, owner, waitSeconds, leaseSeconds, receiptNanos, session, limit);
                    if (!(r instanceof AcquireResult.Queued q) || q.waiter().outcome() == Waiter.Outcome.DROPPED) {
                        sharedTotal.decrementAndGet();
                    }
                    yield r;
                }
            };
        });
    }

    /** Release of the grant with {@code token}: {@code R} if it was the key's active grant, else {@code N}. */
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
        ReleaseResult result = onKey(key, (lane, s, hash, now) -> {
            decisions.released(key, token);
            if (s == null) {
                return ReleaseResult.NOT_HELD;
            }
            SharedGrant g = s.activeShared(token);
            if (g != null) {
                observer.sharedEnded(now - g.grantNanos, false);
                lane.wheel.cancel(g);
                freeSharedSlot(s, g);
            } else if (s.release(token)) {
                observer.ended(now - s.grantNanos, false);
                lane.wheel.cancel(s);
            } else {
                return ReleaseResult.NOT_HELD;
            }
            settle(lane, s, now, readNanos);
            return ReleaseResult.RELEASED;
        });
        observer.released(result);
        return result;
    }

    /**
     * Extends the grant with {@code token} so that its lease ends no earlier than
     * {@code now + leaseSeconds} (an Extend never shortens a lease).
     */
    public ExtendResult extend(byte[] key, long token, int leaseSeconds) {
        ExtendResult result = onKey(key, (lane, s, hash, now) -> {
            decisions.extended(key, token, leaseSeconds);
            SharedGrant g = s == null ? null : s.activeShared(token);
            if (g == null && (s == null || !s.holds(token))) {
                return ExtendResult.NOT_HELD;
            }
            long end = g != null ? Math.max(g.leaseEndNanos, now + TimeUnit.SECONDS.toNanos(leaseSeconds))
                    : s.extendedEnd(now, TimeUnit.SECONDS.toNanos(leaseSeconds));
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
            if (g != null) {
                g.leaseEndNanos = end;
                g.maxLeaseSeconds = Math.max(g.maxLeaseSeconds, leaseSeconds);
            } else {
                s.extendTo(end, leaseSeconds);
            }
            return approval == LeaseHorizon.Approval.ON_DISK ? ExtendResult.EXTENDED : ExtendResult.EXTENDED_AFTER_WRITE;
        });
        observer.extended(result);
        return result;
    }

    /**
     * Check of {@code token} (PROTOCOL.md section 11): true ({@code C}) if it is the key's active
     * grant now, false ({@code N}) otherwise. Changes nothing: a lease that has reached its end is
     * settled as every operation on the key settles it, and that expiry is the only effect. In
     * cluster mode the Check is logged as a no-op, so its answer waits for a commit made after it.
     */
    public boolean check(byte[] key, long token) {
        boolean current = onKey(key, (lane, s, hash, now) -> {
            decisions.checked(key, token);
            return s != null && (s.holds(token) || s.activeShared(token) != null);
        });
        observer.checked(current);
        return current;
    }

    /**
     * Drops every Acquire still queued by {@code session}, without answers, and marks the
     * session closed so none of them can be granted from now on. Its grants are untouched.
     */
    public void closeSession(SessionHandle session) {
        for (Waiter w : session.close()) {
            inLane(lanes[w.state.hash & laneMask], (lane, now) -> {
                if (w.outcome() == Waiter.Outcome.WAITING) {
                    leaveQueue(lane, w);
                    w.finish(Waiter.Outcome.DROPPED);
                    settle(lane, w.state, now);
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

    /** Processes every lease end, wait end and grace end that is due. Call every few milliseconds. */
    public void advance() {
        for (Lane l : lanes) {
            inLane(l, (lane, now) -> {
                if (!lane.graceSettled && !inGrace(now)) {
                    lane.graceSettled = true;
                    for (KeyState s : lane.keys.snapshot()) {
                        settle(lane, s, now);
                    }
                }
                if (lane.wheel.size() > 0) {
                    lane.wheel.advance(now, node -> fire(lane, node, now));
                }
                return null;
            });
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
        for (Lane l : lanes) {
            inLane(l, (lane, now) -> {
                lane.graceSettled = false;
                return null;
            });
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
        for (Lane l : lanes) {
            inLane(l, (lane, now) -> {
                for (KeyState s : lane.keys.snapshot()) {
                    emptyQueue(lane, s, w -> {
                        if (w.session().isClosed()) {
                            w.finish(Waiter.Outcome.DROPPED);
                        } else {
                            w.busy(BusyReason.DRAINING);
                            observer.busy(BusyReason.DRAINING);
                            lane.answer(w);
                        }
                    });
                    settle(lane, s, now);
                }
                return null;
            });
        }
    }

    /**
     * Cluster mode, on a new leader (PROTOCOL.md section 10): installs the committed grants, each
     * running for its longest requested lease plus {@code extraNanos} (the election timeout) from
     * now, so no lease a previous leader granted can end early; shared grants (section 13) each
     * so, under their key's limit. Nothing is logged: these grants are already in the replicated
     * table. Call on an empty registry ({@link #reset()}).
     */
    public void promote(List<HeldGrant> held, long extraNanos) {
        for (HeldGrant h : held) {
            onKey(h.key(), (lane, s, hash, now) -> {
                KeyState k = s != null ? s : new KeyState(h.key(), hash);
                if (k.isHeld() || k.sharedSlots > 0) {
                    return null; // not empty: keep what is there rather than shorten it
                }
                if (!h.shared().isEmpty()) {
                    promoteShared(lane, k, h, now, extraNanos);
                } else if (h.token() == 0) {
                    // In lock-delay when the old leader stopped: the whole delay again from now,
                    // never shorter than what was left of it (the delay is a duration, section 12).
                    k.delay(h.delayedToken(), now, TimeUnit.SECONDS.toNanos(h.delaySeconds()), h.delaySeconds());
                    delayedKeys.incrementAndGet();
                    lane.wheel.schedule(k, k.delayEndNanos);
                } else {
                    k.grant(h.token(), now, h.maxLeaseSeconds(),
                            TimeUnit.SECONDS.toNanos(h.maxLeaseSeconds()) + extraNanos);
                    k.holder = SessionHandle.Peer.PREVIOUS_LEADER;
                    lane.wheel.schedule(k, k.leaseEndNanos);
                }
                if (!k.countedHeld) {
                    k.countedHeld = true;
                    heldKeys.incrementAndGet(); // committed grants are not refused by the limit
                }
                lane.keys.putIfAbsent(k);
                return null;
            });
        }
    }

    /**
     * Installs {@code h}'s shared slots on {@code k} under the key's limit (13.2): each active one
     * for its longest lease plus {@code extraNanos} from now, each delayed one for its whole delay
     * again from now, as {@link #promote} does for exclusive grants. Counted in the shared and
     * held totals without their limits: committed grants are not refused.
     */
    private void promoteShared(Lane lane, KeyState k, HeldGrant h, long now, long extraNanos) {
        for (HeldGrant.Slot slot : h.shared()) {
            long token = slot.token() != 0 ? slot.token() : slot.delayedToken();
            SharedGrant g = k.grantShared(token, now, slot.maxLeaseSeconds(),
                    TimeUnit.SECONDS.toNanos(slot.maxLeaseSeconds()) + extraNanos, h.sharedLimit());
            sharedTotal.incrementAndGet();
            if (slot.token() != 0) {
                g.holder = SessionHandle.Peer.PREVIOUS_LEADER;
                sharedHeld.incrementAndGet();
            } else {
                g.token = 0;
                g.maxLeaseSeconds = 0;
                g.delayedToken = slot.delayedToken();
                g.delayEndNanos = now + TimeUnit.SECONDS.toNanos(slot.delaySeconds());
            }
            lane.wheel.schedule(g, g.nextEventNanos());
        }
    }

    /**
     * Cluster mode, when this node stops serving: forgets every key, grant and waiter (waiters
     * are dropped without an answer; their sessions are being closed with {@code X 9}) and ends
     * a drain, so the registry is ready for the next {@link #promote}.
     */
    public void reset() {
        draining = true; // refuse Acquires that race with the sweep
        for (Lane l : lanes) {
            inLane(l, (lane, now) -> {
                for (KeyState s : lane.keys.snapshot()) {
                    emptyQueue(lane, s, w -> w.finish(Waiter.Outcome.DROPPED));
                    if (s.isHeld()) {
                        s.release(s.token);
                        lane.wheel.cancel(s);
                    }
                    if (s.isDelayed()) {
                        s.endDelay(s.delayEndNanos);
                        delayedKeys.decrementAndGet();
                        lane.wheel.cancel(s);
                    }
                    while (s.sharedFirst != null) {
                        SharedGrant g = s.sharedFirst;
                        lane.wheel.cancel(g);
                        freeSharedSlot(s, g);
                    }
                    uncountIfFree(s);
                    lane.keys.remove(s);
                }
                return null;
            });
        }
        draining = false;
    }

    public boolean isDraining() {
        return draining;
    }

    /**
     * The latest end (monotonic nanos) of the leases held now, or empty when no key is held: what
     * a graceful stop must protect across the restart (released and expired leases need nothing).
     * Scans every key under its lane's lock; for the stop, not for a hot path.
     */
    public OptionalLong latestHeldLeaseEnd() {
        long[] latest = {0};
        boolean[] any = {false};
        for (Lane l : lanes) {
            inLane(l, (lane, now) -> {
                for (KeyState s : lane.keys.snapshot()) {
                    if (s.isHeld() && !s.leaseOver(now) && (!any[0] || s.leaseEndNanos - latest[0] > 0)) {
                        latest[0] = s.leaseEndNanos;
                        any[0] = true;
                    }
                }
                return null;
            });
        }
        return any[0] ? OptionalLong.of(latest[0]) : OptionalLong.empty();
    }

    /** Keys with an active grant (counted when granted, uncounted when released or expired). */
    public int heldKeys() {
        return heldKeys.get() - delayedKeys.get();
    }

    /**
     * Keys in lock-delay now (PROTOCOL.md section 12): their lease expired less than the
     * lock-delay ago, and they are granted to nobody until it ends. Each keeps its
     * max-held-keys slot meanwhile, so their number is bounded like held keys.
     */
    public int delayedKeys() {
        return delayedKeys.get();
    }

    /** Acquires waiting in any queue. */
    public int waiters() {
        return waiters.get();
    }

    /** The longest queue right now. Walks every key: for gauges scraped every few seconds, not hot paths. */
    public int longestQueue() {
        int max = 0;
        for (Lane l : lanes) {
            int longest = inLane(l, (lane, now) -> {
                int m = 0;
                for (KeyState s : lane.keys.snapshot()) {
                    m = Math.max(m, s.waiters);
                }
                return m;
            });
            max = Math.max(max, longest);
        }
        return max;
    }

    // ---------------------------------------------------------------- inspect (read-only)

    /**
     * What an operator sees of one key now (the {@code locks} endpoint, {@code leasehold
     * inspect}): one lane lock for a few field reads and the first {@code maxWaits} waiters, so
     * it costs a grant no more than a Check does. Settles the key first, as every request does.
     *
     * @param maxWaits how many of the oldest waiters' remaining waits to report
     */
    public KeyView inspect(byte[] key, int maxWaits) {
        return onKey(key, (lane, s, hash, now) -> s == null ? KeyView.free(key) : KeyView.of(s, now, maxWaits));
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
    public Top top(int n, int chunk, int maxWaits) {
        return top(n, chunk, maxWaits, () -> { });
    }

    /**
     * As {@link #top(int, int, int)}, running {@code betweenChunks} after each chunk with no lane
     * lock held: the caller's pacing (the endpoint leaves the CPU to the event loops there).
     */
    public Top top(int n, int chunk, int maxWaits, Runnable betweenChunks) {
        if (n < 1 || chunk < 1) {
            throw new IllegalArgumentException("n and chunk must be at least 1: " + n + ", " + chunk);
        }
        long started = clock.nanoTime();
        PriorityQueue<Candidate> queues = new PriorityQueue<>(
                Comparator.comparingLong(Candidate::score));
        PriorityQueue<Candidate> oldest = new PriorityQueue<>(
                Comparator.comparingLong(Candidate::score));
        long scanned = 0;
        for (Lane l : lanes) {
            int from = 0;
            while (from >= 0) {
                int start = from;
                long[] seen = new long[1];
                from = inLane(l, (lane, now) -> lane.keys.scan(start, chunk, s -> {
                    seen[0]++;
                    if (s.waiters > 0) {
                        offer(queues, s, s.waiters, n);
                    }
                    if (s.isHeld()) {
                        offer(oldest, s, now - s.grantNanos, n);
                    }
                }, lane.lock::hasQueuedThreads)); // a request waits: let it in after at most 64 slots
                scanned += seen[0];
                betweenChunks.run();
            }
        }
        return new Top(views(queues, maxWaits), views(oldest, maxWaits), scanned, clock.nanoTime() - started);
    }

    /** A key that may make the top, with its score (higher is better) when it was seen. */
    private record Candidate(KeyState state, long score) {
    }

    /** Allocates only for a key that enters the top: a walk over a million keys makes a handful of objects. */
    private static void offer(PriorityQueue<Candidate> top, KeyState s, long score, int n) {
        if (top.size() < n) {
            top.add(new Candidate(s, score));
        } else if (score > top.peek().score()) {
            top.poll();
            top.add(new Candidate(s, score));
        }
    }

    /** Best first, each key once, each read again under its lane lock. */
    private List<KeyView> views(PriorityQueue<Candidate> top, int maxWaits) {
        List<Candidate> best = new ArrayList<>(top);
        best.sort(Comparator.comparingLong(Candidate::score).reversed());
        Set<KeyState> once = Collections.newSetFromMap(new IdentityHashMap<>());
        List<KeyView> out = new ArrayList<>(best.size());
        for (Candidate c : best) {
            if (once.add(c.state())) {
                out.add(inspect(c.state().key, maxWaits));
            }
        }
        return out;
    }

    /**
     * The result of {@link #top}.
     *
     * @param longestQueues keys with waiters, the longest queue first (as read again)
     * @param heldLongest held keys, the oldest grant first
     * @param scannedKeys keys the walk visited
     * @param tookNanos how long the walk took
     */
    public record Top(List<KeyView> longestQueues, List<KeyView> heldLongest, long scannedKeys, long tookNanos) {
    }

    // ---------------------------------------------------------------- the lane prologue

    /** An operation on one key, run under its lane's lock with the key settled at {@code now}. */
    @FunctionalInterface
    private interface KeyOp<R> {
        /** @param s the key's state, or null if the key is FREE and unknown to the lane */
        R apply(Lane lane, KeyState s, int hash, long now);
    }

    /** An operation on a whole lane, run under its lock. */
    @FunctionalInterface
    private interface LaneOp<R> {
        R apply(Lane lane, long now);
    }

    /** Finds the key's lane, settles the key, runs {@code op}: the one way a request enters a lane. */
    private <R> R onKey(byte[] key, KeyOp<R> op) {
        int hash = KeyTable.hash(key);
        return inLane(lanes[hash & laneMask], (lane, now) -> {
            KeyState s = lane.keys.get(key, hash);
            if (s != null && !settle(lane, s, now)) {
                s = null; // settled to FREE and forgotten
            }
            return op.apply(lane, s, hash, now);
        });
    }

    /** Lock, read the lane's clock, run, unlock, then deliver the answers owed to waiters. */
    private <R> R inLane(Lane lane, LaneOp<R> op) {
        R result;
        List<Waiter> answers;
        lane.lock.lock();
        try {
            result = op.apply(lane, lane.now(clock));
            answers = lane.takeAnswers();
        } finally {
            lane.lock.unlock();
        }
        deliver(answers);
        return result;
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

    // ---------------------------------------------------------------- internals (lane lock held)

    private AcquireResult grantNow(Lane lane, KeyState s, long now, int leaseSeconds, long owner, long receiptNanos,
            SessionHandle session) {
        Taken taken = takeGrant(lane, s, now, leaseSeconds);
        if (taken.refused() != null) {
            uncountIfFree(s);
            return busy(taken.refused());
        }
        s.holder = session.peer();
        observer.granted(0, false);
        if (taken.awaitsHorizon()) {
            // Granted now; the A goes out through the notifier once the horizon covers the lease.
            // An immediate grant answers queued_ms 0 (PROTOCOL.md section 3), however long the frame
            // took from its decoding to this lane (a cold server: 2-13 ms): the waiter's "receipt"
            // is the grant itself. Reporting less than the real wait only shortens the client's bound.
            Waiter w = new Waiter(owner, leaseSeconds, now, session, s);
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
    private Taken takeGrant(Lane lane, KeyState s, long now, int leaseSeconds) {
        long leaseNanos = TimeUnit.SECONDS.toNanos(leaseSeconds);
        Taken admitted = admit(s, now, leaseNanos);
        if (admitted.refused() != null) {
            return admitted;
        }
        long token = tokens.next();
        if (token == TokenSource.NONE) {
            return Taken.refused(tokens.noneReason());
        }
        s.grant(token, now, leaseSeconds, leaseNanos);
        decisions.granted(s.key, token, leaseSeconds);
        lane.wheel.schedule(s, s.leaseEndNanos);
        lane.keys.putIfAbsent(s);
        return admitted;
    }

    /**
     * The admission every new grant passes, exclusive or shared, before its token is issued: the
     * key counted against {@code max-held-keys} (once, from its first grant until it has none),
     * and the lease approved by the lease horizon. {@link Taken#NOW} or
     * {@link Taken#AFTER_HORIZON} when admitted, else the refusal.
     */
    private Taken admit(KeyState s, long now, long leaseNanos) {
        if (!s.countedHeld) {
            if (!tryIncrement(heldKeys, limits.maxHeldKeys())) {
                return Taken.refused(BusyReason.HELD_KEYS);
            }
            s.countedHeld = true;
        }
        return switch (horizon.approve(now, now + leaseNanos)) {
            case REFUSED -> Taken.refused(BusyReason.STORAGE);
            case AFTER_WRITE -> Taken.AFTER_HORIZON;
            case ON_DISK -> Taken.NOW;
        };
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
     * Queues an Acquire. An Acquire of a session that has already closed is dropped (no answer
     * is owed to it) and reported as Queued, which is what its handler must do: write nothing.
     */
    private AcquireResult enqueue(Lane lane, KeyState s, long owner, int waitSeconds, int leaseSeconds,
            long receiptNanos, SessionHandle session) {
        return enqueue(lane, s, owner, waitSeconds, leaseSeconds, receiptNanos, session, EXCLUSIVE);
    }

    /** Marks an exclusive Acquire where a shared limit would go. */
    private static final int EXCLUSIVE = -1;

    /** @param sharedLimit the limit of a shared acquire, or {@link #EXCLUSIVE} */
    private AcquireResult enqueue(Lane lane, KeyState s, long owner, int waitSeconds, int leaseSeconds,
            long receiptNanos, SessionHandle session, int sharedLimit) {
        if (s.waiters >= limits.maxWaitersPerKey()) {
            return busy(BusyReason.KEY_QUEUE);
        }
        if (!tryIncrement(waiters, limits.maxWaitersTotal())) {
            return busy(BusyReason.TOTAL_WAITERS);
        }
        Waiter w = new Waiter(owner, leaseSeconds, receiptNanos, session, s, sharedLimit != EXCLUSIVE);
        if (session.isClosed()) {
            waiters.decrementAndGet();
            w.finish(Waiter.Outcome.DROPPED);
            return new AcquireResult.Queued(w);
        }
        if (!session.tryAdd(w, limits.maxPendingPerSession())) {
            waiters.decrementAndGet();
            return busy(BusyReason.SESSION);
        }
        if (w.shared) {
            s.sharedLimit = sharedLimit; // a queued S fixes the key's limit (13.2)
        }
        s.enqueue(w);
        lane.keys.putIfAbsent(s);
        lane.wheel.schedule(w, receiptNanos + TimeUnit.SECONDS.toNanos(waitSeconds));
        return new AcquireResult.Queued(w);
    }

    /**
     * Brings a key up to date at {@code now}: ends a lease that has run out, grants to the head
     * of the queue when there is no grant (and no recovery grace), and forgets a FREE key.
     *
     * @return false if the key is FREE and no longer in its lane's table
     */
    private boolean settle(Lane lane, KeyState s, long now) {
        return settle(lane, s, now, Waiter.NO_HANDOFF);
    }

    /**
     * As {@link #settle(Lane, KeyState, long)}; a waiter granted here was handed the key by a
     * Release read at {@code handoffStartNanos} ({@link Waiter#NO_HANDOFF} if none).
     */
    private boolean settle(Lane lane, KeyState s, long now, long handoffStartNanos) {
        long expiring = s.token;
        long held = s.expire(now);
        if (held >= 0) {
            observer.ended(held, true);
            lane.wheel.cancel(s);
            long delay = limits.lockDelayNanos();
            int delaySeconds = (int) TimeUnit.NANOSECONDS.toSeconds(delay);
            decisions.expired(s.key, expiring, delaySeconds);
            if (delay > 0) {
                // From the lease's end, not from when the timer got to it (section 12).
                s.delay(expiring, s.leaseEndNanos, delay, delaySeconds);
                delayedKeys.incrementAndGet();
                lane.wheel.schedule(s, s.delayEndNanos);
            }
        }
        long delayedToken = s.delayedToken;
        if (s.endDelay(now)) {
            delayedKeys.decrementAndGet();
            decisions.delayEnded(s.key, delayedToken);
            lane.wheel.cancel(s);
        }
        settleShared(lane, s, now);
        boolean grace = inGrace(now);
        for (Waiter w = s.nextToGrant(grace, limits.sharedSlots(s.sharedLimit));
                w != null; w = s.nextToGrant(grace, limits.sharedSlots(s.sharedLimit))) {
            int sharedLimit = s.sharedLimit; // read before the waiter leaves: the last one unsets it
            leaveQueue(lane, w);
            if (w.session().isClosed()) {
                w.finish(Waiter.Outcome.DROPPED);
                continue;
            }
            if (w.shared) {
                grantSharedWaiter(lane, s, w, now, sharedLimit, handoffStartNanos);
                continue;
            }
            Taken taken = takeGrant(lane, s, now, w.leaseSeconds());
            if (taken.refused() != null) {
                w.busy(taken.refused());
                observer.busy(taken.refused());
            } else {
                w.handedOffBy(handoffStartNanos);
                w.granted(s.token, now);
                s.holder = w.session().peer();
                if (taken.awaitsHorizon()) {
                    w.awaitHorizon();
                }
                observer.granted(now - w.receiptNanos(), true);
            }
            lane.answer(w);
        }
        if (s.noGrants()) {
            uncountIfFree(s);
            if (s.head == null) {
                lane.keys.remove(s); // by identity: a no-op if s is not (or no longer) in the table
                return false;
            }
        }
        return true;
    }

    private void uncountIfFree(KeyState s) {
        if (s.countedHeld && s.noGrants()) {
            s.countedHeld = false;
            heldKeys.decrementAndGet();
        }
    }

    /** Takes every waiter off {@code s}'s queue, in order, and hands each to {@code then}. */
    private void emptyQueue(Lane lane, KeyState s, Consumer<Waiter> then) {
        while (s.head != null) {
            Waiter w = s.head;
            leaveQueue(lane, w);
            then.accept(w);
        }
    }

    private void leaveQueue(Lane lane, Waiter w) {
        w.state.unlink(w);
        lane.wheel.cancel(w);
        waiters.decrementAndGet();
        if (w.shared) {
            sharedTotal.decrementAndGet(); // a grant from the queue counts its slot again
        }
        w.session().remove(w);
    }

    /** A timer of {@code lane} is due at {@code now}: a lease end, a delay end or a wait end. */
    private void fire(Lane lane, TimerNode node, long now) {
        if (node instanceof SharedGrant g) {
            if (g.nextEventNanos() - now > 0) {
                lane.wheel.schedule(g, g.nextEventNanos()); // extended since it was armed
            } else {
                settle(lane, g.state, now);
            }
        } else if (node instanceof KeyState s) {
            if (s.isDelayed() && now - s.delayEndNanos < 0) {
                lane.wheel.schedule(s, s.delayEndNanos); // not yet (cannot happen: armed at its end)
            } else if (s.isHeld() && !s.leaseOver(now)) {
                lane.wheel.schedule(s, s.leaseEndNanos); // extended since it was armed
            } else {
                settle(lane, s, now);
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
            settle(lane, w.state, now);
        }
    }

    // ---------------------------------------------------------------- shared holds (lane lock held)

    /**
     * Ends every shared lease of {@code s} that is over at {@code now} (its slot freed, or held
     * for the lock-delay from the lease's end) and every shared delay that is over.
     */
    private void settleShared(Lane lane, KeyState s, long now) {
        long delay = limits.lockDelayNanos();
        SharedGrant g = s.sharedFirst;
        while (g != null) {
            SharedGrant next = g.next;
            if (g.isActive() && g.leaseOver(now)) {
                observer.sharedEnded(g.leaseEndNanos - g.grantNanos, true);
                sharedHeld.decrementAndGet();
                lane.wheel.cancel(g);
                decisions.expired(s.key, g.token, (int) TimeUnit.NANOSECONDS.toSeconds(delay));
                if (delay > 0) {
                    g.delayedToken = g.token;
                    g.token = 0;
                    g.delayEndNanos = g.leaseEndNanos + delay;
                    g.maxLeaseSeconds = 0;
                } else {
                    g.token = 0;
                    removeSlot(s, g);
                    g = next;
                    continue;
                }
            }
            if (!g.isActive()) {
                if (now - g.delayEndNanos >= 0) {
                    lane.wheel.cancel(g);
                    decisions.delayEnded(s.key, g.delayedToken);
                    removeSlot(s, g);
                } else if (!g.isScheduled()) {
                    lane.wheel.schedule(g, g.delayEndNanos);
                }
            }
            g = next;
        }
    }

    /** Frees an active shared grant's slot at once (Release, reset). */
    private void freeSharedSlot(KeyState s, SharedGrant g) {
        if (g.isActive()) {
            sharedHeld.decrementAndGet();
            g.token = 0;
        }
        removeSlot(s, g);
    }

    private void removeSlot(KeyState s, SharedGrant g) {
        s.removeShared(g);
        sharedTotal.decrementAndGet();
    }

    private AcquireResult grantSharedNow(Lane lane, KeyState s, long now, int leaseSeconds, long owner, int limit,
            long receiptNanos, SessionHandle session) {
        SharedTaken taken = takeSharedGrant(lane, s, now, leaseSeconds, limit);
        if (taken.refused() != null) {
            uncountIfFree(s);
            return busy(taken.refused());
        }
        SharedGrant g = taken.grant();
        g.holder = session.peer();
        observer.sharedGranted(0, false);
        if (taken.awaitsHorizon()) {
            // As for an exclusive grant: an immediate grant answers queued_ms 0, so its "receipt"
            // is the grant itself.
            Waiter w = new Waiter(owner, leaseSeconds, now, session, s, true);
            w.granted(g.token, now);
            w.awaitHorizon();
            return new AcquireResult.Queued(w);
        }
        return new AcquireResult.Granted(g.token);
    }

    /**
     * Grants the shared head waiter {@code w} (already out of the queue) a slot, or answers it
     * {@code B}; a Release read at {@code handoffStartNanos} handed it the key
     * ({@link Waiter#NO_HANDOFF} if none).
     */
    private void grantSharedWaiter(Lane lane, KeyState s, Waiter w, long now, int limit, long handoffStartNanos) {
        sharedTotal.incrementAndGet(); // its count as a waiter moves to its slot (or is undone below)
        SharedTaken taken = takeSharedGrant(lane, s, now, w.leaseSeconds(), limit);
        if (taken.refused() != null) {
            sharedTotal.decrementAndGet();
            w.busy(taken.refused());
            observer.busy(taken.refused());
        } else {
            SharedGrant g = taken.grant();
            w.handedOffBy(handoffStartNanos);
            w.granted(g.token, now);
            g.holder = w.session().peer();
            if (taken.awaitsHorizon()) {
                w.awaitHorizon();
            }
            observer.sharedGranted(now - w.receiptNanos(), true);
        }
        lane.answer(w);
    }

    /**
     * Adds a shared grant to {@code s} (its caller counted it in {@link #sharedTotal}), or says
     * why it cannot be. A key held shared counts once against {@code max-held-keys}, from its
     * first slot until it has none.
     */
    private SharedTaken takeSharedGrant(Lane lane, KeyState s, long now, int leaseSeconds, int limit) {
        long leaseNanos = TimeUnit.SECONDS.toNanos(leaseSeconds);
        Taken admitted = admit(s, now, leaseNanos);
        if (admitted.refused() != null) {
            return SharedTaken.refused(admitted.refused());
        }
        long token = tokens.next();
        if (token == TokenSource.NONE) {
            return SharedTaken.refused(tokens.noneReason());
        }
        SharedGrant g = s.grantShared(token, now, leaseSeconds, leaseNanos, limit);
        decisions.sharedGranted(s.key, token, leaseSeconds, limit);
        sharedHeld.incrementAndGet();
        lane.wheel.schedule(g, g.leaseEndNanos);
        lane.keys.putIfAbsent(s);
        return new SharedTaken(g, null, admitted.awaitsHorizon());
    }

    /**
     * What {@link #takeSharedGrant} did: the grant, with its answer due now or once the lease
     * horizon covers it ({@code awaitsHorizon}), or the reason it was refused.
     */
    private record SharedTaken(SharedGrant grant, BusyReason refused, boolean awaitsHorizon) {
        static SharedTaken refused(BusyReason reason) {
            return new SharedTaken(null, reason, false);
        }
    }

    /** {@code leasehold.max-shared-holders-per-key}: the largest shared limit ({@code X 3} above it). */
    public int maxSharedPerKey() {
        return limits.maxSharedPerKey();
    }

    /** Shared slots plus shared waiters over all keys (bounded by {@code max-shared-total}). */
    public int sharedTotal() {
        return sharedTotal.get();
    }

    /** Active shared grants over all keys (delayed shared slots not counted). */
    public int sharedHeld() {
        return sharedHeld.get();
    }

    private AcquireResult busy(BusyReason reason) {
        observer.busy(reason);
        return new AcquireResult.Busy(reason);
    }

    private boolean inGrace(long now) {
        return graceActive && now - graceEndNanos < 0;
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
}
