package dev.leasehold.client.internal;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Up to {@code poolSize} sessions, one per {@link Slot}. A request goes to the least loaded
 * session that is up, else to one still connecting; empty slots are filled on demand. Slot
 * {@code i} starts on address {@code i mod n}; when a session cannot be set up its slot moves to
 * the next address and, after a full round of failures, backs off. In a cluster, a follower's
 * {@code X 8} names the leader: slots move to it and requests prefer sessions on it
 * ({@link #notLeader}). Requests that find no session (every slot backing off) are parked and
 * re-offered when a slot may retry; their own deadlines still run, so a request nobody could
 * send ends as Unavailable.
 *
 * <p>Threading: all fields but {@code lastSetupFailure} (a volatile diagnostic) are guarded by
 * {@code this}, the slots too; requests are called without holding it. {@link #pick} asks
 * sessions for their state while holding it (lock order: pool, then session; a session never
 * calls the pool while holding its own lock).
 */
final class SessionPool implements Dispatcher {

    private static final System.Logger LOG = System.getLogger(SessionPool.class.getName());

    private final Engine engine;
    private volatile String lastSetupFailure;
    /** Since a session last came up: each server whose session failed to set up, and why (fail-fast). */
    private final java.util.Map<String, String> failedSinceUp = new java.util.LinkedHashMap<>();
    private final List<InetSocketAddress> addresses;
    private final Slot[] slots;
    /** The leader a follower named last, or null (single server, or not told yet). */
    private InetSocketAddress leader;
    private final ArrayDeque<Outbound<?>> parked = new ArrayDeque<>();
    private final List<Session> created = new ArrayList<>();
    private Scheduler.Timer parkedRetry;
    /** Addresses (as {@link Config#shown}) that answered a Hello with {@code X 1}: 1.3 frames there (9.13). */
    private final java.util.Set<String> speaks13 = new java.util.HashSet<>();
    /** Whether the last session that came up speaks 1.4; true until one is known (auto). */
    private volatile boolean lastUpSpeaks14 = true;
    private long sessionCount;
    private boolean closed;

    SessionPool(Engine engine) {
        this.engine = engine;
        this.addresses = new ArrayList<>(engine.config().addresses());
        this.slots = new Slot[engine.config().poolSize()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(i, i % addresses.size());
        }
    }

    /** Offers a definitely-not-sent request to a session (or parks it). */
    @Override
    public void submit(Outbound<?> o) {
        submit(o, false);
    }

    @Override
    public void submit(Outbound<?> o, boolean callerWrites) {
        while (true) {
            Session target;
            synchronized (this) {
                if (closed) {
                    target = null;
                } else {
                    startMissing(engine.ticker().nanoTime());
                    target = pick();
                    String everyServerFailed = everyServerFailed();
                    if (target == null && everyServerFailed != null) {
                        target = null;
                        // leave the lock before telling the request (it completes its future)
                        failFast(o, everyServerFailed);
                        return;
                    }
                    if (target == null) {
                        parked.add(o);
                        armParkedRetry();
                        return;
                    }
                }
            }
            if (target == null) {
                o.abandon("the client is closed");
                return;
            }
            if (target.enqueue(o, callerWrites)) {
                return;
            }
            // That session closed in between; its slot is being freed. Choose again.
        }
    }

    /** A session finished its opening handshake. */
    synchronized void up(Session s) {
        slots[s.slot()].up();
        lastUpSpeaks14 = s.speaks14();
        lastSetupFailure = null;
        failedSinceUp.clear();
    }

    /**
     * With fail-fast: when every server has failed to set up a session since one was last up (and
     * none is up or setting up now), why, naming each; otherwise null.
     */
    private String everyServerFailed() {
        if (!engine.config().failFast() || failedSinceUp.size() < addresses.size()) {
            return null;
        }
        for (Slot slot : slots) {
            if (slot.session != null && !slot.session.isClosed() && slot.session.isUp()) {
                return null;
            }
        }
        return String.join("; ", failedSinceUp.values());
    }

    private void failFast(Outbound<?> o, String why) {
        engine.schedule(() -> o.abandon(why), engine.ticker().nanoTime());
    }

    @Override
    public String lastSetupFailure() {
        return lastSetupFailure;
    }

    /**
     * Whether a session to {@code address} opens with a Hello (PROTOCOL.md 9.13): never with
     * {@code protocol-revision} 1.3; with {@code auto}, unless that address answered a Hello with
     * {@code X 1} and no session to it has failed since.
     */
    boolean asksHello(InetSocketAddress address) {
        int revision = engine.config().protocolRevision();
        if (revision == Config.V1_3) {
            return false;
        }
        synchronized (this) {
            return revision == Config.V1_4 || !speaks13.contains(Config.shown(address));
        }
    }

    /**
     * Whether an acquire started now should keep its wait to the millisecond (9.13): false with
     * {@code protocol-revision} 1.3, or when the last session that came up speaks 1.3 (its waits
     * are whole seconds, rounded up, as before 1.4).
     */
    @Override
    public boolean millisecondWaits() {
        return engine.config().protocolRevision() != Config.V1_3 && lastUpSpeaks14;
    }

    /** A session that could not be set up. An {@code X 1} to the Hello with {@code auto} is no failure: 1.3 frames next. */
    void setupFailed(Session s, String reason) {
        InetSocketAddress address = s.address();
        if (s.helloRefused() && engine.config().protocolRevision() == Config.AUTO) {
            LOG.log(System.Logger.Level.DEBUG, () -> Config.shown(address) + " speaks 1.3: " + reason);
            synchronized (this) {
                speaks13.add(Config.shown(address));
                lastUpSpeaks14 = false;
            }
            return;
        }
        lastSetupFailure = reason;
        // The command line (fail-fast) shows each attempt with -v; a service retrying quietly logs at DEBUG.
        LOG.log(engine.config().failFast() ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                () -> "connecting to " + Config.shown(address) + " failed: " + reason);
        synchronized (this) {
            failedSinceUp.put(Config.shown(address), reason);
        }
    }

    /** A session closed; {@code wasUp} is false when it never came up (a connect failure). */
    void ended(Session s, boolean wasUp) {
        List<Outbound<?>> retry;
        synchronized (this) {
            Slot slot = slots[s.slot()];
            if (slot.session == s) {
                slot.session = null;
            }
            boolean fallBack = s.helloRefused() && engine.config().protocolRevision() == Config.AUTO;
            if (!fallBack && !s.speaks14() && !closed) {
                speaks13.remove(Config.shown(s.address())); // a session to it failed: the next one asks again
            }
            // After an X 1 to the Hello the same address is tried again at once, with 1.3 frames.
            slot.ended(wasUp || fallBack, addresses.size(), engine.ticker().nanoTime());
            retry = new ArrayList<>(parked);
            parked.clear();
            String why = everyServerFailed();
            if (why != null) {
                for (Outbound<?> o : retry) {
                    failFast(o, why);
                }
                retry.clear();
            }
        }
        for (Outbound<?> o : retry) {
            if (!o.isDone()) {
                submit(o);
            }
        }
    }

    /**
     * A cluster follower answered {@code X 8} on {@code s} (PROTOCOL.md 9.12): its slot's next
     * session goes to the leader it named ({@code leader=host:port}), added to the addresses if it
     * is not a seed, and from then on requests prefer sessions to it. A hint naming the node that
     * answered, or no hint (an election is running), moves the slot to the next seed instead, after
     * a back-off of 50 ms doubling to 500 ms (on the engine's ticker; requests that find no session
     * meanwhile are parked and re-offered by the scheduler). The requests' own deadlines bound all
     * of it.
     */
    void notLeader(Session s, String message) {
        InetSocketAddress hint = LeaderHint.parse(message);
        synchronized (this) {
            Slot slot = slots[s.slot()];
            long now = engine.ticker().nanoTime();
            if (hint == null || LeaderHint.sameAddress(hint, s.address())) {
                slot.noLeaderKnown(addresses.size(), now);
                return;
            }
            int idx = -1;
            for (int j = 0; j < addresses.size(); j++) {
                if (LeaderHint.sameAddress(addresses.get(j), hint)) {
                    idx = j;
                }
            }
            if (idx < 0) {
                addresses.add(hint);
                idx = addresses.size() - 1;
            }
            leader = addresses.get(idx);
            for (Slot other : slots) {
                if (other.session == null || other.session == s) {
                    other.addressIndex = idx; // the leader, for every session still to open
                }
            }
            slot.notLeaderNamed(now);
        }
    }

    @Override
    public List<Session> close() {
        List<Session> open = new ArrayList<>();
        List<Outbound<?>> abandoned;
        List<Session> all;
        synchronized (this) {
            closed = true;
            for (Slot slot : slots) {
                if (slot.session != null) {
                    open.add(slot.session);
                }
            }
            abandoned = new ArrayList<>(parked);
            parked.clear();
            all = new ArrayList<>(created);
            if (parkedRetry != null) {
                parkedRetry.cancel();
            }
        }
        for (Session s : open) {
            s.close("the client is closing");
        }
        for (Outbound<?> o : abandoned) {
            o.abandon("the client is closed");
        }
        return all;
    }

    @Override
    public synchronized List<Session> sessions() {
        List<Session> list = new ArrayList<>();
        for (Slot slot : slots) {
            if (slot.session != null) {
                list.add(slot.session);
            }
        }
        return list;
    }

    private void startMissing(long now) {
        for (Slot slot : slots) {
            if (!slot.mayStart(now)) {
                continue;
            }
            Session s = new Session(engine, this, slot.index, addresses.get(slot.addressIndex),
                    engine.config().name() + "-s" + (++sessionCount));
            slot.session = s;
            created.removeIf(old -> old.isClosed() && !old.threadsAlive());
            created.add(s);
            s.start();
        }
    }

    private Session pick() {
        if (leader != null) {
            // Cluster: once a follower named the leader, sessions to it are preferred (others only
            // while none to it is open).
            Session onLeader = pickAmong(true);
            if (onLeader != null) {
                return onLeader;
            }
        }
        return pickAmong(false);
    }

    private Session pickAmong(boolean leaderOnly) {
        Session best = null;
        int bestLoad = Integer.MAX_VALUE;
        boolean bestUp = false;
        for (Slot slot : slots) {
            Session s = slot.session;
            if (s == null || s.isClosed() || (leaderOnly && !LeaderHint.sameAddress(s.address(), leader))) {
                continue;
            }
            boolean up = s.isUp();
            int load = s.load();
            if (best == null || (up && !bestUp) || (up == bestUp && load < bestLoad)) {
                best = s;
                bestLoad = load;
                bestUp = up;
            }
        }
        return best;
    }

    private void armParkedRetry() {
        if (parkedRetry != null) {
            return;
        }
        long earliest = 0;
        boolean any = false;
        for (Slot slot : slots) {
            if (slot.waitsToRetry()) {
                earliest = any ? LeaseMath.earliest(earliest, slot.retryAt()) : slot.retryAt();
                any = true;
            }
        }
        if (any) {
            parkedRetry = engine.schedule(this::retryParked, earliest);
        }
    }

    private void retryParked() {
        List<Outbound<?>> retry;
        synchronized (this) {
            parkedRetry = null;
            retry = new ArrayList<>(parked);
            parked.clear();
        }
        for (Outbound<?> o : retry) {
            if (!o.isDone()) {
                submit(o);
            }
        }
    }
}
