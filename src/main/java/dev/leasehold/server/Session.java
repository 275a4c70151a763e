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

    private final Channel channel;

    /**
     * Answers of the read batch in progress, written to the channel as one buffer at the end of
     * the batch ({@link SessionHandler#channelReadComplete}), or null. One buffer per batch instead
     * of one per answer: a pipelining client gets, say, 32 answers for the cost of one pooled
     * buffer, one outbound-buffer entry and one iovec. Only touched on the channel's event loop.
     */
    private ByteBuf batch;

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

    /** True while a read batch has answers pending, so a same-loop answer can join it. */
    boolean batching() {
        return batch != null;
    }

    /** Hands the batch to the channel (not flushed) if it reached {@link #BATCH_LIMIT}. */
    void writeBatchIfFull(ChannelHandlerContext ctx) {
        if (batch != null && batch.writerIndex() >= BATCH_LIMIT) {
            writeBatch(ctx);
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

    /** Drops the pending batch (the channel is closing). Event loop only. */
    void discardBatch() {
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
