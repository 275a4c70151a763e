package dev.leasehold.server;

import dev.leasehold.registry.SessionHandle;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;

/** One client connection as the registry sees it: its channel, so waiters' answers can find it. */
final class Session extends SessionHandle {

    /** A batch is handed to the channel once it holds this many bytes (bounds its growth). */
    static final int BATCH_LIMIT = 16 * 1024;
    private static final int BATCH_INITIAL = 256;
    /** Read batches waiting for a commit before the session stops being read (cluster mode). */
    private static final int MAX_DEFERRED = 64;

    private final Channel channel;
    /** Batches handed to the gate and not yet written (cluster mode). Event loop only. */
    private int deferred;
    /** The serving epoch this session was first served in, 0 before its first lock request. */
    long servedEpoch;

    /**
     * Answers of the read batch in progress, written to the channel as one buffer at the end of
     * the batch ({@link SessionHandler#channelReadComplete}), or null. One buffer per batch instead
     * of one per answer: a pipelining client gets, say, 32 answers for the cost of one pooled
     * buffer, one outbound-buffer entry and one iovec. Only touched on the channel's event loop.
     */
    private ByteBuf batch;

    /**
     * Hand-off starts ({@link dev.leasehold.registry.Waiter#handoffStartNanos()}) of the {@code A}
     * answers appended to the batch and not yet flushed, timed by {@link #handoffTimer} after the
     * flush that carries them. Event loop only; null until a hand-off joins a batch.
     */
    private long[] handoffStarts;
    private int handoffs;
    private HandoffTimer handoffTimer = HandoffTimer.NONE;

    Session(Channel channel) {
        this.channel = channel;
    }

    Channel channel() {
        return channel;
    }

    /** The batch to append an answer to (created on first use). Event loop only. */
    ByteBuf batch() {
        ByteBuf b = batch;
        if (b == null) {
            b = batch = channel.alloc().ioBuffer(BATCH_INITIAL);
        }
        return b;
    }

    /**
     * The {@code A} just appended to the batch ends a hand-off that started at {@code startNanos}:
     * timed when that batch is flushed. Event loop only.
     */
    void handoffInBatch(long startNanos, HandoffTimer timer) {
        handoffTimer = timer;
        long[] starts = handoffStarts;
        if (starts == null) {
            starts = handoffStarts = new long[4];
        } else if (handoffs == starts.length) {
            starts = handoffStarts = java.util.Arrays.copyOf(starts, handoffs * 2);
        }
        starts[handoffs++] = startNanos;
    }

    /** Times the hand-offs whose {@code A} the flush that just returned carried. Event loop only. */
    void handoffsFlushed() {
        if (handoffs > 0) {
            handoffTimer.flushed(handoffStarts, handoffs);
            handoffs = 0;
        }
    }

    /**
     * Set by {@link SessionHandler} from the first {@code channelRead} of a read batch until the
     * {@code channelReadComplete} that flushes it. Event loop only.
     */
    boolean reading;

    /**
     * True while an answer appended now is sure to be flushed soon by {@link SessionHandler}: a
     * read batch is in progress (even one with no answer yet: a Release that grants a waiter of
     * its own session is decided before its {@code R} is appended), or a batch is pending. A
     * same-loop answer then joins the batch instead of costing a write and a flush of its own.
     */
    boolean batching() {
        return reading || batch != null;
    }

    /** Hands the batch to the channel (not flushed) if it reached {@link #BATCH_LIMIT}. */
    void writeBatchIfFull(ChannelHandlerContext ctx, ServingGate gate) {
        if (batch != null && batch.writerIndex() >= BATCH_LIMIT) {
            if (gate == ServingGate.SINGLE_NODE) {
                writeBatch(ctx);
            } else {
                flushBatch(ctx, gate);
            }
        }
    }

    /** Hands the pending batch, if any, to the channel (not flushed). Event loop only. */
    void writeBatch(ChannelHandlerContext ctx) {
        ByteBuf b = batch;
        if (b != null) {
            batch = null;
            ctx.write(b, ctx.voidPromise());
        }
    }

    /**
     * Writes and flushes the pending batch once {@code gate} says the decisions behind it have
     * committed (at once in single-node mode). Deferred batches keep their order: each waits for
     * a barrier at least as high as the one before, and callbacks for increasing barriers run in
     * order onto this event loop. If the decisions never commit the batch is dropped: the node
     * lost its leadership and closes the session with {@code X 9}. Event loop only.
     */
    void flushBatch(ChannelHandlerContext ctx, ServingGate gate) {
        ByteBuf b = batch;
        if (gate == ServingGate.SINGLE_NODE) {
            writeBatch(ctx);
            ctx.flush();
            handoffsFlushed();
            return;
        }
        if (b == null) {
            ctx.flush();
            handoffsFlushed(); // of a batch handed over unflushed (none in cluster mode)
            return;
        }
        batch = null;
        if (servedEpoch == 0) {
            // No lock request served on this session yet: only Pongs, which reflect no state.
            ctx.writeAndFlush(b, ctx.voidPromise());
            return;
        }
        if (servedEpoch != gate.epoch()) {
            b.release(); // decided while this node led in an earlier epoch: it gets X 9, not answers
            handoffs = 0;
            return;
        }
        long barrier = gate.barrier();
        if (deferred == 0 && gate.committed(barrier)) {
            ctx.writeAndFlush(b, ctx.voidPromise());
            handoffsFlushed();
            return;
        }
        // The batch's hand-offs go with it: timed when it is written after its commit.
        long[] starts = handoffs == 0 ? null : java.util.Arrays.copyOf(handoffStarts, handoffs);
        handoffs = 0;
        HandoffTimer timer = handoffTimer;
        deferred++;
        if (deferred > MAX_DEFERRED) {
            channel.config().setAutoRead(false); // commits are behind: stop reading this session
        }
        gate.whenCommitted(barrier, committed -> ctx.executor().execute(() -> {
            deferred--;
            if (committed && channel.isActive()) {
                ctx.writeAndFlush(b, ctx.voidPromise());
                if (starts != null) {
                    timer.flushed(starts, starts.length);
                }
            } else {
                b.release();
            }
            if (deferred <= MAX_DEFERRED / 2 && channel.isWritable() && !channel.config().isAutoRead()) {
                channel.config().setAutoRead(true);
                ctx.read();
            }
        }));
    }

    /** Runs {@code action} on the event loop after every answer already handed to the gate. */
    void afterAnswers(ChannelHandlerContext ctx, ServingGate gate, Runnable action) {
        if (gate == ServingGate.SINGLE_NODE || deferred == 0) {
            action.run();
            return;
        }
        gate.whenCommitted(gate.barrier(), committed -> ctx.executor().execute(action));
    }

    /** Drops the pending batch (the channel is closing). Event loop only. */
    void discardBatch() {
        handoffs = 0;
        ByteBuf b = batch;
        if (b != null) {
            batch = null;
            b.release();
        }
    }

    @Override
    public String toString() {
        return "session " + channel.remoteAddress();
    }
}
