package dev.leasehold.client.internal;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Up to {@code poolSize} sessions ("slots"). A request goes to the least loaded session that is
 * up, else to one still connecting; empty slots are filled on demand. Slot {@code i} starts on
 * address {@code i mod n}; when a session cannot be set up its slot moves to the next address,
 * and after a full round of failures it backs off (100 ms doubling to 1 s). In a cluster, a
 * follower's {@code X 8} names the leader: slots move to it and requests prefer sessions on it
 * ({@link #notLeader}). Requests that find no session (every slot backing off) are parked and
 * re-offered when a slot may retry; their own deadlines still run, so a request nobody could
 * send ends as Unavailable.
 *
 * <p>Threading: all fields but {@code lastSetupFailure} (a volatile diagnostic) are guarded by
 * {@code this}; requests are called without holding it. {@link #pick} asks sessions for their
 * state while holding it (lock order: pool, then session; a session never calls the pool while
 * holding its own lock).
 */
final class SessionPool implements Dispatcher {

    private static final long MIN_BACKOFF = 100_000_000L;
    private static final long MAX_BACKOFF = 1_000_000_000L;
    /** Between seeds after an {@code X 8} that names no leader (9.12): 50 ms doubling to 500 ms. */
    private static final long NO_LEADER_MIN_BACKOFF = 50_000_000L;
    private static final long NO_LEADER_MAX_BACKOFF = 500_000_000L;

    private final Engine engine;
    private volatile String lastSetupFailure;
    private final List<InetSocketAddress> addresses;
    private final Session[] slots;
    private final int[] addressIndex;
    private final int[] failures;
    private final long[] retryAt;
    private final boolean[] backingOff;
    /** The slot's session is closing after {@code X 8}: its failure count stands (no reset). */
    private final boolean[] notLeader;
    /** {@code X 8} without a usable hint in a row, per slot (the back-off between seeds). */
    private final int[] noLeaderRounds;
    /** {@code X 8} naming a leader in a row, per slot (every third one backs off). */
    private final int[] hintedRounds;
    /** The leader a follower named last, or null (single server, or not told yet). */
    private InetSocketAddress leader;
    private final ArrayDeque<Outbound<?>> parked = new ArrayDeque<>();
    private final List<Session> created = new ArrayList<>();
    private Scheduler.Timer parkedRetry;
    private long sessionCount;
    private boolean closed;

    SessionPool(Engine engine) {
        this.engine = engine;
        this.addresses = new ArrayList<>(engine.config().addresses());
        int n = engine.config().poolSize();
        this.slots = new Session[n];
        this.addressIndex = new int[n];
        this.failures = new int[n];
        this.retryAt = new long[n];
        this.backingOff = new boolean[n];
        this.notLeader = new boolean[n];
        this.noLeaderRounds = new int[n];
        this.hintedRounds = new int[n];
        for (int i = 0; i < n; i++) {
            addressIndex[i] = i % addresses.size();
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
        failures[s.slot()] = 0;
        lastSetupFailure = null;
    }

    @Override
    public String lastSetupFailure() {
        return lastSetupFailure;
    }

    void setupFailed(String reason) {
        lastSetupFailure = reason;
    }

    /** A session closed; {@code wasUp} is false when it never came up (a connect failure). */
    void ended(Session s, boolean wasUp) {
        List<Outbound<?>> retry;
        synchronized (this) {
            int i = s.slot();
            if (slots[i] == s) {
                slots[i] = null;
            }
            if (notLeader[i]) {
                notLeader[i] = false; // handled by notLeader()
            } else if (wasUp) {
                failures[i] = 0;
                hintedRounds[i] = 0;
            } else {
                failures[i]++;
                addressIndex[i] = (addressIndex[i] + 1) % addresses.size();
                if (failures[i] % addresses.size() == 0) {
                    int rounds = failures[i] / addresses.size();
                    backingOff[i] = true;
                    retryAt[i] = engine.ticker().nanoTime()
                            + Math.min(MAX_BACKOFF, MIN_BACKOFF << Math.min(rounds - 1, 10));
                }
            }
            retry = new ArrayList<>(parked);
            parked.clear();
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
        InetSocketAddress hint = parseHint(message);
        synchronized (this) {
            int i = s.slot();
            if (hint != null && !sameAddress(hint, s.address())) {
                int idx = -1;
                for (int j = 0; j < addresses.size(); j++) {
                    if (sameAddress(addresses.get(j), hint)) {
                        idx = j;
                    }
                }
                if (idx < 0) {
                    addresses.add(hint);
                    idx = addresses.size() - 1;
                }
                leader = addresses.get(idx);
                for (int j = 0; j < slots.length; j++) {
                    if (slots[j] == null || slots[j] == s) {
                        addressIndex[j] = idx; // the leader, for every session still to open
                    }
                }
                noLeaderRounds[i] = 0;
                // Named leaders that answer X 8 too (stale hints while an election runs, two
                // nodes naming each other): an Acquire is resent on every X 8 until D, so every
                // third named leader in a row waits as if none were known.
                notLeader[i] = true; // so that ended() keeps the count
                if (++hintedRounds[i] % 3 == 0) {
                    backingOff[i] = true;
                    retryAt[i] = engine.ticker().nanoTime() + NO_LEADER_MAX_BACKOFF / 2;
                }
                return;
            }
            // No leader known (an election): next seed, after 50 ms doubling to 500 ms. Not reset
            // by the follower's Ping answer (up()), only by a hint.
            notLeader[i] = true;
            hintedRounds[i] = 0;
            addressIndex[i] = (addressIndex[i] + 1) % addresses.size();
            backingOff[i] = true;
            retryAt[i] = engine.ticker().nanoTime()
                    + Math.min(NO_LEADER_MAX_BACKOFF, NO_LEADER_MIN_BACKOFF << Math.min(noLeaderRounds[i], 4));
            noLeaderRounds[i]++;
        }
    }

    private static InetSocketAddress parseHint(String message) {
        if (message == null || !message.startsWith("leader=")) {
            return null;
        }
        String hp = message.substring("leader=".length());
        int colon = hp.lastIndexOf(':');
        if (colon <= 0) {
            return null;
        }
        try {
            return InetSocketAddress.createUnresolved(hp.substring(0, colon), Integer.parseInt(hp.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static boolean sameAddress(InetSocketAddress a, InetSocketAddress b) {
        return a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
    }

    @Override
    public List<Session> close() {
        List<Session> open = new ArrayList<>();
        List<Outbound<?>> abandoned;
        List<Session> all;
        synchronized (this) {
            closed = true;
            for (Session s : slots) {
                if (s != null) {
                    open.add(s);
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
        for (Session s : slots) {
            if (s != null) {
                list.add(s);
            }
        }
        return list;
    }

    private void startMissing(long now) {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                continue;
            }
            if (backingOff[i]) {
                if (now - retryAt[i] < 0) {
                    continue;
                }
                backingOff[i] = false;
            }
            Session s = new Session(engine, this, i, addresses.get(addressIndex[i]),
                    engine.config().name() + "-s" + (++sessionCount));
            slots[i] = s;
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
        for (Session s : slots) {
            if (s == null || s.isClosed() || (leaderOnly && !sameAddress(s.address(), leader))) {
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
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] == null && backingOff[i]) {
                earliest = any ? LeaseMath.earliest(earliest, retryAt[i]) : retryAt[i];
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
