package dev.leasehold.server;

import java.util.Arrays;

import dev.leasehold.registry.SessionHandle;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * One client connection as the registry sees it: its channel, so waiters' answers can find it;
 * the answers of the read batch in progress; and its {@link Outbox}, which decides when those
 * answers leave. Only touched on the channel's event loop, except {@link #channel()} and
 * {@link #outbox()}, which never change.
 */
final class ServerSession extends SessionHandle {

    /** A batch is handed on once it holds this many bytes (bounds its growth). */
    static final int BATCH_LIMIT = 16 * 1024;
    private static final int BATCH_INITIAL = 256;

    private final Channel channel;
    private final Outbox outbox;

    /**
     * Answers of the read batch in progress, handed to the outbox as one buffer at the end of the
     * batch ({@link SessionHandler#channelReadComplete}), or null. One buffer per batch instead
     * of one per answer: a pipelining client gets, say, 32 answers for the cost of one pooled
     * buffer, one outbound-buffer entry and one iovec.
     */
    private ByteBuf batch;

    /**
     * Hand-off starts ({@link dev.leasehold.registry.Waiter#handoffStartNanos()}) of the {@code A}
     * answers appended to the batch and not yet flushed, timed by {@link #handoffTimer} after the
     * flush that carries them. Null until a hand-off joins a batch.
     */
    private long[] handoffStarts;
    private int handoffs;
    private HandoffTimer handoffTimer = HandoffTimer.NONE;

    /**
     * Set by {@link SessionHandler} from the first {@code channelRead} of a read batch until the
     * {@code channelReadComplete} that flushes it.
     */
    boolean reading;

    ServerSession(Channel channel, Outboxes outboxes) {
        this.channel = channel;
        this.outbox = outboxes.open(this);
    }

    Channel channel() {
        return channel;
    }

    Outbox outbox() {
        return outbox;
    }

    /** The batch to append an answer to (created on first use). */
    ByteBuf batch() {
        ByteBuf b = batch;
        if (b == null) {
            b = batch = channel.alloc().ioBuffer(BATCH_INITIAL);
        }
        return b;
    }

    /** True if the batch reached {@link #BATCH_LIMIT}: it should be handed on now. */
    boolean batchFull() {
        return batch != null && batch.writerIndex() >= BATCH_LIMIT;
    }

    /** The batch, now the caller's; null if none is pending. */
    ByteBuf takeBatch() {
        ByteBuf b = batch;
        batch = null;
        return b;
    }

    /**
     * True while an answer appended now is sure to be flushed soon by {@link SessionHandler}: a
     * read batch is in progress (even one with no answer yet: a Release that grants a waiter of
     * its own session is decided before its {@code R} is appended), or a batch is pending. A
     * same-loop answer then joins the batch instead of costing a write and a flush of its own.
     */
    boolean batching() {
        return reading || batch != null;
    }

    /**
     * The {@code A} just appended to the batch ends a hand-off that started at {@code startNanos}:
     * timed when that batch is flushed.
     */
    void handoffInBatch(long startNanos, HandoffTimer timer) {
        handoffTimer = timer;
        long[] starts = handoffStarts;
        if (starts == null) {
            starts = handoffStarts = new long[4];
        } else if (handoffs == starts.length) {
            starts = handoffStarts = Arrays.copyOf(starts, handoffs * 2);
        }
        starts[handoffs++] = startNanos;
    }

    /** Times the hand-offs whose {@code A} the flush that just returned carried. */
    void handoffsFlushed() {
        if (handoffs > 0) {
            handoffTimer.flushed(handoffStarts, handoffs);
            handoffs = 0;
        }
    }

    /**
     * The hand-offs of the batch just taken, to be timed when it is written later
     * ({@link HandoffTimer.Pending#flushed()}), or null if it carries none.
     */
    HandoffTimer.Pending takeHandoffs() {
        if (handoffs == 0) {
            return null;
        }
        HandoffTimer.Pending p = new HandoffTimer.Pending(handoffTimer, Arrays.copyOf(handoffStarts, handoffs));
        handoffs = 0;
        return p;
    }

    /** Forgets the hand-offs of the batch just taken (it is dropped, never written). */
    void dropHandoffs() {
        handoffs = 0;
    }

    /** Drops the pending batch (the channel is closing). */
    void discardBatch() {
        handoffs = 0;
        ByteBuf b = takeBatch();
        if (b != null) {
            b.release();
        }
    }

    @Override
    public String toString() {
        return "session " + channel.remoteAddress();
    }
}
