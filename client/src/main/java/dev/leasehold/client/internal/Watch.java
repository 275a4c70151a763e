package dev.leasehold.client.internal;

import dev.leasehold.protocol.Answer;

/**
 * The mechanics of one observation (PROTOCOL.md 9.15): a chain of subscriptions
 * ({@link ObserveCall}s, each with a fresh watch id from the engine's owner counter), the token
 * guard across them (9.15.4), and a one-slot mailbox towards the listener (9.15.2).
 *
 * <p>A subscription that ends (a {@code B}, an {@code X 8} or {@code X 9}, a broken session, a
 * 1.3 session that cannot carry it) makes the listener hear {@code unknown} once, and the next
 * one is tried after 50 ms doubling to 500 ms (500 ms at once when the server speaks 1.3); its
 * first event ends the unknown. Events arrive on session readers; the listener is called on a
 * delivery thread, one call at a time, and at most one event waits for it: a newer one replaces
 * it, marked coalesced. An unknown drops a waiting event (it was the session's last word, not the
 * key's state now).
 *
 * <p>Threading: every field is guarded by {@code this}; nothing is called out under it but
 * {@link Object#wait}.
 */
public final class Watch implements ObserveCall.Sink {

    /**
     * One event as delivered (16.2): {@code state} one of {@code F H D S G} as its wire byte,
     * {@code cause} 0 to 6, {@code token} after the guard of 9.15.4, {@code coalesced} after the
     * mailbox's own replacements. The public layer names them.
     */
    public record Seen(int state, int cause, boolean coalesced, long token, int count, int limit, byte[] value) {
    }

    /** Where the watch delivers; called on a delivery thread, one call at a time. */
    public interface Listener {
        void event(Seen event);

        void unknown(String reason);
    }

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");
    static final long FIRST_RETRY = 50_000_000L;
    static final long MAX_RETRY = 500_000_000L;

    private final Engine engine;
    private final String key;
    private final byte[] keyBytes;
    private final Listener listener;

    private boolean closed;
    /** The subscription now (queued, written, or open), or null between two. */
    private ObserveCall current;
    /** Subscriptions that ended since the last event (the back-off's exponent). */
    private int failures;
    /** The listener was told unknown and no event followed yet. */
    private boolean unknownTold;
    /** The highest token accepted for delivery (9.15.4). */
    private long highest;

    private String pendingUnknown;
    private Seen pendingEvent;
    /** An event was replaced or dropped since the last one delivered: the next is coalesced. */
    private boolean skipped;
    /** A delivery thread runs the mailbox. */
    private boolean running;
    /** The thread inside a listener call, or null. */
    private Thread calling;

    Watch(Engine engine, String key, byte[] keyBytes, Listener listener) {
        this.engine = engine;
        this.key = key;
        this.keyBytes = keyBytes;
        this.listener = listener;
    }

    void start() {
        subscribe();
    }

    private void subscribe() {
        ObserveCall call;
        synchronized (this) {
            if (closed) {
                return;
            }
            call = new ObserveCall(engine, engine.nextOwner(), keyBytes, this);
            current = call;
        }
        call.result().whenComplete((reason, error) -> ended(call, error != null ? String.valueOf(error) : reason));
        engine.submitWatch(call);
    }

    /** The observed key. */
    public String key() {
        return key;
    }

    @Override
    public void event(ObserveCall call, Answer.Event e) {
        int state = e.state();
        if ("FHDSG".indexOf(state) < 0 || e.cause() > 6) {
            LOG.log(System.Logger.Level.WARNING, () -> "an event this client cannot read, skipped: " + e);
            return;
        }
        boolean deliver;
        synchronized (this) {
            if (closed || call != current) {
                return;
            }
            boolean highestKnown = state == 'F' || state == 'S' || state == 'G';
            if (!highestKnown && e.token() < highest) {
                LOG.log(System.Logger.Level.WARNING, () -> "a stale event (token below " + highest + "), dropped: " + e);
                return; // committed state cannot produce one: the rule is a guard (9.15.4)
            }
            long token = Math.max(e.token(), highest);
            highest = token;
            failures = 0;
            unknownTold = false;
            skipped |= pendingEvent != null;
            pendingEvent = new Seen(state, e.cause(), skipped || (e.flags() & 1) != 0, token, e.count(), e.limit(),
                    e.value());
            deliver = schedule();
        }
        if (deliver) {
            engine.deliveryExecutor().execute(this::deliver);
        }
    }

    /** A subscription ended: unknown (once), then the next one after the back-off. */
    private void ended(ObserveCall call, String reason) {
        boolean deliver = false;
        long delay;
        synchronized (this) {
            if (closed || call != current) {
                return;
            }
            current = null;
            if (!unknownTold) {
                unknownTold = true;
                pendingUnknown = reason;
                skipped |= pendingEvent != null;
                pendingEvent = null;
                deliver = schedule();
            }
            delay = reason != null && reason.contains("revision 1.3") ? MAX_RETRY
                    : Math.min(MAX_RETRY, FIRST_RETRY << Math.min(failures, 4));
            failures++;
        }
        if (deliver) {
            engine.deliveryExecutor().execute(this::deliver);
        }
        engine.schedule(this::subscribe, engine.ticker().nanoTime() + delay); // null once the client closed
    }

    /** Under the monitor: whether a delivery thread must be started for the mailbox. */
    private boolean schedule() {
        if (running) {
            return false;
        }
        running = true;
        return true;
    }

    /** The mailbox's delivery loop, on a delivery thread. */
    private void deliver() {
        while (true) {
            String unknown;
            Seen event;
            synchronized (this) {
                calling = null;
                notifyAll();
                if (closed || (pendingUnknown == null && pendingEvent == null)) {
                    running = false;
                    return;
                }
                unknown = pendingUnknown;
                event = unknown == null ? pendingEvent : null;
                if (unknown != null) {
                    pendingUnknown = null;
                } else {
                    pendingEvent = null;
                    skipped = false;
                }
                calling = Thread.currentThread();
            }
            try {
                if (unknown != null) {
                    listener.unknown(unknown);
                } else {
                    listener.event(event);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "an observation listener threw", e);
            }
        }
    }

    /**
     * Ends the observation: {@code U} on the subscription's session if it is open; no listener
     * call begins after this returns (it waits for one in progress, unless called from it).
     */
    public void close() {
        ObserveCall call;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            call = current;
            current = null;
            pendingUnknown = null;
            pendingEvent = null;
            boolean interrupted = false;
            while (calling != null && calling != Thread.currentThread()) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (call == null) {
            return;
        }
        Link s = call.link();
        if (s == null || !s.sendHere(SessionOnlyCall.unobserve(engine, call.watch()))) {
            call.abandon("the observation was closed");
        }
    }

    /** True once {@link #close()} was called. */
    public synchronized boolean isClosed() {
        return closed;
    }
}
