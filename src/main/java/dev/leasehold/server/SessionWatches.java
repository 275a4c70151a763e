package dev.leasehold.server;

import java.util.HashMap;
import java.util.Map;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.LockRegistry;
import io.netty.channel.Channel;

/**
 * The open watches of one session (PROTOCOL.md section 16): {@code O} and {@code U}, the limits
 * of 16.6, writing kept events when the channel drains, and the end of every watch with the
 * session. Event loop only, except what {@link ServerWatch} calls back from other threads
 * ({@link #onLoop}, {@link #whenShowable}, {@link #stats}), which touches no field here.
 */
final class SessionWatches {

    private final SessionHandler.Shared shared;
    private final LockRegistry registry;
    private final ServerSession session;
    private final Channel channel;
    private final Map<Long, ServerWatch> open = new HashMap<>();

    SessionWatches(SessionHandler.Shared shared, ServerSession session) {
        this.shared = shared;
        this.registry = shared.registry();
        this.session = session;
        this.channel = session.channel();
    }

    /** True if {@code watch} is open on this session: an {@code O} naming it is {@code X 3} (16.7). */
    boolean isOpen(long watch) {
        return open.containsKey(watch);
    }

    /**
     * An {@code O} whose id is not open and whose key passed the checks: {@code B watch} beyond a
     * limit or when the cluster cannot log its no-op (16.6); else the watch starts, and its first
     * event follows through the watch like any other event.
     */
    void observe(Request.Observe o) {
        if (open.size() >= shared.maxWatchesPerSession() || !shared.stats().tryOpenWatch(shared.maxWatchesTotal())) {
            Answers.appendWithLong(session.batch(), AnswerType.BUSY, o.watch());
            return;
        }
        ServerWatch w = new ServerWatch(o.watch(), this, channel);
        if (!registry.watch(o.key(), w)) {
            shared.stats().watchClosed();
            Answers.appendWithLong(session.batch(), AnswerType.BUSY, o.watch());
            return;
        }
        open.put(o.watch(), w);
    }

    /** {@code U}: answered at once, also for an id that is not open; the watch's last frame (16.1). */
    void unobserve(Request.Unobserve u) {
        ServerWatch w = open.remove(u.watch());
        if (w != null) {
            end(w);
        }
        Answers.appendWithLong(session.batch(), AnswerType.UNOBSERVED, u.watch());
    }

    /** The channel is writable again: the kept events go out (16.4). */
    void writable() {
        boolean wrote = false;
        for (ServerWatch w : open.values()) {
            if (!channel.isWritable()) {
                break; // the rest stay kept until the next drain
            }
            wrote |= w.flushKept();
        }
        if (wrote) {
            channel.flush();
        }
    }

    /**
     * Every event decided so far is shown ({@code showable}: its horizon write or commit is done)
     * or dropped (never will be), before the session's {@code X} (PROTOCOL.md 16.7).
     */
    void showDecided(boolean showable) {
        for (ServerWatch w : open.values()) {
            w.showDecided(showable);
        }
    }

    /**
     * The session ends (its {@code X} is about to be written, a drain closes it): kept events are
     * written whatever the channel's mark (one per watch at most), then every watch ends, so
     * nothing of a watch follows.
     */
    void flushAndEnd() {
        for (ServerWatch w : open.values()) {
            w.flushKept();
        }
        endAll();
    }

    /** Every watch ends without writing anything more (the channel closed). */
    void endAll() {
        for (ServerWatch w : open.values()) {
            end(w);
        }
        open.clear();
    }

    /**
     * The session decided on an {@code X}: no decision from now on reaches its watches; events
     * decided before keep their way out until {@link #flushAndEnd} runs just before the {@code X}.
     */
    void stopDeciding() {
        for (ServerWatch w : open.values()) {
            registry.unwatch(w);
        }
    }

    private void end(ServerWatch w) {
        registry.unwatch(w);
        w.close();
        shared.stats().watchClosed();
    }

    /** Open watches of this session. */
    int size() {
        return open.size();
    }

    /** Events kept over this session's watches (tests: at most one per watch). */
    int keptEvents() {
        int n = 0;
        for (ServerWatch w : open.values()) {
            n += w.keptEvents();
        }
        return n;
    }

    // Called back by ServerWatch from any thread.

    ServerStats stats() {
        return shared.stats();
    }

    /** Runs {@code task} as a task on this session's event loop (never inline: see ServerWatch). */
    void onLoop(Runnable task) {
        try {
            channel.eventLoop().execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // The event loop is shutting down: the session is closing, no event is owed.
        }
    }

    /** See {@link Outboxes#whenShowable}. */
    void whenShowable(Outboxes.Showable then) {
        shared.outboxes().whenShowable(registry, then);
    }
}
