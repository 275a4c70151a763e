package dev.leasehold.server;

import java.util.ArrayDeque;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.registry.KeyEvent;
import dev.leasehold.registry.Watch;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * One open watch of one session (PROTOCOL.md section 16): takes the key's events from the
 * registry and writes them on the session's channel, each no earlier than its change's answer
 * could be, and never more than one kept while the session's output is full.
 *
 * <h2>The path of an event</h2>
 * <ol>
 * <li><b>Decided</b> ({@link #decided}, any thread, under the key's lane lock): appended to this
 * watch's short list of decided events, in decision order. Cheap: a monitor held for a few field
 * writes, no I/O. Beyond {@value #MAX_DECIDED} decided and not yet showable (commits or horizon
 * writes far behind), the newest replaces the last one, flagged coalesced: memory stays bounded.</li>
 * <li><b>Showable</b> (after the lane lock is let go, {@link #afterDecided}): one task on the
 * session's event loop asks {@link Outboxes#whenShowable} for the point where everything decided
 * so far may be shown: after the lease horizon's fsync on a single node, after the commit in a
 * cluster. Asked from the event loop after the read batch that made the change was handed to
 * the outbox, so its answer was registered first and is written first (16.3.3).</li>
 * <li><b>Written</b> (a task on the event loop once showable): in decision order. While the
 * channel is not writable (the 128 KB high-water mark) an event is <em>kept</em> instead, and a
 * later one replaces it with the coalesced flag (a first event keeps cause 0, 16.4);
 * {@link #flushKept} writes it when the channel drains.</li>
 * </ol>
 * The token of an {@code F}, {@code S} or {@code G} event is never below the highest this watch
 * has written (16.2).
 */
final class ServerWatch extends Watch {

    /** Decided events waiting to become showable before the newest replaces the last (coalesced). */
    static final int MAX_DECIDED = 16;

    /** A decided event: its decision's sequence number in this watch, and whether it folds others. */
    private record Decided(KeyEvent event, long seq, boolean coalesced) {
    }

    private final long id;
    private final SessionWatches owner;
    private final Channel channel;

    // Guarded by this: written under lane locks on any thread, read on the event loop.
    private final ArrayDeque<Decided> decided = new ArrayDeque<>(2);
    private long lastSeq;
    private boolean closed;
    private boolean showableAsked;
    /** Events were dropped ({@link #drop}): the next one shown is flagged coalesced. */
    private boolean dropped;

    // Event loop only.
    /** The event kept while the channel is not writable (16.4), or null. */
    private Decided kept;
    private long highestTokenWritten;

    ServerWatch(long id, SessionWatches owner, Channel channel) {
        this.id = id;
        this.owner = owner;
        this.channel = channel;
    }

    long id() {
        return id;
    }

    @Override
    protected void decided(KeyEvent event) {
        synchronized (this) {
            if (closed) {
                return;
            }
            long seq = ++lastSeq;
            if (decided.size() >= MAX_DECIDED) {
                Decided older = decided.pollLast();
                decided.addLast(new Decided(fold(older.event(), event), seq, true));
                owner.stats().eventCoalesced();
            } else {
                decided.addLast(new Decided(event, seq, false));
            }
        }
    }

    @Override
    protected void afterDecided() {
        synchronized (this) {
            if (closed || showableAsked) {
                return;
            }
            showableAsked = true;
        }
        owner.onLoop(this::askShowable);
    }

    /** Event loop: everything decided up to now becomes showable once its horizon write or commit is done. */
    private void askShowable() {
        long upTo;
        synchronized (this) {
            showableAsked = false;
            if (closed) {
                return;
            }
            upTo = lastSeq;
        }
        // Always a task, never inline: an answer released by the same write or commit was queued
        // as a task on this loop before this callback runs, and must be written first.
        owner.whenShowable(showable -> owner.onLoop(() -> {
            if (showable) {
                show(upTo);
            } else {
                drop(upTo);
            }
        }));
    }

    /**
     * Event loop: the decisions up to {@code upTo} will never be showable (a cluster node lost its
     * leadership: its sessions are closing with {@code X 9}; a single node's horizon write failed:
     * their grants were answered {@code B}). Their events are dropped; the next one written says
     * so with the coalesced flag.
     */
    private void drop(long upTo) {
        synchronized (this) {
            while (!decided.isEmpty() && decided.peekFirst().seq() <= upTo) {
                decided.pollFirst();
                dropped = true;
            }
        }
    }

    /** Event loop: writes (or keeps) the decided events up to {@code upTo}, in order, then flushes. */
    private void show(long upTo) {
        boolean wrote = false;
        while (true) {
            Decided d;
            synchronized (this) {
                if (closed || decided.isEmpty() || decided.peekFirst().seq() > upTo) {
                    break;
                }
                d = decided.pollFirst();
                if (dropped) {
                    dropped = false;
                    d = new Decided(d.event(), d.seq(), true);
                }
            }
            if (kept != null) {
                kept = new Decided(fold(kept.event(), d.event()), d.seq(), true);
                owner.stats().eventCoalesced();
            } else {
                kept = d;
            }
            if (channel.isWritable()) {
                wrote |= writeKept();
            }
        }
        if (wrote) {
            channel.flush();
        }
    }

    /**
     * Event loop: every decided event is shown ({@code showable}) or dropped; the caller knows
     * that everything decided so far is showable, or never will be (the session's {@code X}).
     */
    void showDecided(boolean showable) {
        if (showable) {
            show(Long.MAX_VALUE);
        } else {
            drop(Long.MAX_VALUE);
        }
    }

    /** Event loop: writes the kept event, if any (the channel drained, or the session ends); true if one was written. */
    boolean flushKept() {
        return writeKept();
    }

    private boolean writeKept() {
        Decided d = kept;
        if (d == null) {
            return false;
        }
        kept = null;
        KeyEvent e = d.event();
        long token = e.tokenIsHighestKnown() ? Math.max(e.token(), highestTokenWritten) : e.token();
        highestTokenWritten = Math.max(highestTokenWritten, token);
        int vlen = e.value() == null ? 0 : e.value().length;
        ByteBuf b = channel.alloc().ioBuffer(AnswerType.EVENT_HEADER_BYTES + vlen + 1);
        Answers.appendEvent(b, id, e.state(), e.cause(), d.coalesced() ? 1 : 0, token, e.count(), e.limit(),
                e.value());
        channel.write(b, channel.voidPromise());
        owner.stats().eventSent();
        return true;
    }

    /**
     * The newest state, cause and token, but a first event (the only one with cause 0) keeps
     * cause 0 (16.4): the client still learns it is the watch's first.
     */
    private static KeyEvent fold(KeyEvent older, KeyEvent newer) {
        return older.cause() == 0 ? newer.withCause(0) : newer;
    }

    /** Nothing of this watch is written any more; its decided and kept events are dropped. Event loop. */
    void close() {
        synchronized (this) {
            closed = true;
            decided.clear();
        }
        kept = null;
    }

    /** Events kept while the channel was full (0 or 1), for tests and metrics. */
    int keptEvents() {
        return kept == null ? 0 : 1;
    }

    /** Events decided and not yet shown (at most {@value #MAX_DECIDED}). */
    synchronized int decidedEvents() {
        return decided.size();
    }
}
