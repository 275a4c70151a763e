package dev.leasehold.server;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;

/**
 * Closes one session after an {@code X} (bad input, a denied key, leadership lost), in this order:
 * <ol>
 * <li>The session's waiters are dropped, so none can be granted any more, and its watches are
 * told no more changes (PROTOCOL.md 16.7).</li>
 * <li>The answers owed to earlier frames go out first: an {@code A} still waiting for the lease
 * horizon, or in cluster mode for its commit, included. The {@code X} waits behind them.</li>
 * <li>{@code X} is written. From then on nothing the client sends is executed, but the session is
 * still <em>read</em> and what arrives is discarded (the caller resumes reading): closing a socket
 * with unread input makes the kernel send a reset, and a reset makes the client's kernel drop the
 * {@code X} and the answers it had not read yet.</li>
 * <li>Once {@code X} is flushed the server's side is shut down for writing (FIN; {@code close_notify}
 * first with TLS). The client reads everything up to the end of the stream, and the session
 * closes when the client closes its side.</li>
 * <li>A client that does neither, or that does not even read its answers so {@code X} is never
 * flushed, is force-closed {@code closeBound} after the decision (the frame timeout): its slot and
 * its buffers are freed. When {@code X} is still unflushed the close is a reset (SO_LINGER 0), so
 * the kernel does not keep the unread answers for a peer that will not read them either.</li>
 * </ol>
 * Event loop only.
 */
final class SessionCloser {

    private static final Logger LOG = LoggerFactory.getLogger(SessionHandler.class);

    private final SessionHandler.Shared shared;
    private final ServerSession session;
    private final SessionWatches watches;
    private boolean errorFlushed;
    private ScheduledFuture<?> forceClose;

    SessionCloser(SessionHandler.Shared shared, ServerSession session, SessionWatches watches) {
        this.shared = shared;
        this.session = session;
        this.watches = watches;
    }

    /**
     * Steps 1, 2 and 3 now, 4 and 5 when their time comes.
     *
     * @param detail what the log may say and the client may not see (a denied key), or null
     */
    void close(ChannelHandlerContext ctx, ProtocolError error, String detail) {
        shared.registry().closeSession(session);
        watches.stopDeciding(); // PROTOCOL.md 16.7: no event decided from now on
        shared.stats().protocolError(error.code());
        session.outbox().flush(ctx); // answers to the frames before the bad one go first
        shared.errorLog().closing(ctx.channel().remoteAddress(), error, detail);
        forceClose = ctx.executor().schedule(() -> forceClose(ctx), shared.closeBoundNanos(), TimeUnit.NANOSECONDS);
        // An A granted to an earlier frame may still wait for the lease horizon (written from the
        // store's thread), or in cluster mode for its commit: the X comes after it, so earlier
        // frames keep their answers. Always a task, never inline: the store's thread hands that A
        // to this event loop as a task queued before it reports the callback finished, so an X
        // written inline (the horizon already durable by then) could overtake it; a task queued
        // now runs after it.
        // A session with watches waits for what makes their events showable (PROTOCOL.md 16.7:
        // events decided before the X are written before it): on a single node the same horizon
        // write, in a cluster the commit of everything decided so far. Without watches, no commit
        // is waited for beyond the answers'.
        if (watches.size() > 0) {
            session.outbox().after(ctx, () -> shared.outboxes().whenShowable(shared.registry(),
                    showable -> ctx.executor().execute(() -> sendError(ctx, error, showable))));
        } else {
            session.outbox().after(ctx, () -> shared.registry().whenLeasesDurable(
                    onDisk -> ctx.executor().execute(() -> sendError(ctx, error, false))));
        }
    }

    /** The channel closed: the bound is no longer needed. */
    void closed() {
        if (forceClose != null) {
            forceClose.cancel(false);
            forceClose = null;
        }
    }

    private void sendError(ChannelHandlerContext ctx, ProtocolError error, boolean eventsShowable) {
        if (!ctx.channel().isActive()) {
            return;
        }
        watches.showDecided(eventsShowable);
        watches.flushAndEnd(); // a kept event goes out before the X, nothing of a watch after it
        ctx.writeAndFlush(Answers.error(ctx.alloc(), error.code(), error.message())).addListener(f -> {
            if (f.isSuccess()) {
                errorFlushed = true;
                shutdownOutput(ctx);
            } else {
                ctx.close();
            }
        });
    }

    /** Ends the server's side of the stream after X, so the client reads up to EOF; TLS says close_notify first. */
    private static void shutdownOutput(ChannelHandlerContext ctx) {
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        ChannelFuture tlsClosed = ssl != null ? ssl.closeOutbound() : ctx.newSucceededFuture();
        tlsClosed.addListener(f -> {
            if (ctx.channel() instanceof DuplexChannel duplex && f.isSuccess()) {
                duplex.shutdownOutput();
            } else {
                ctx.close();
            }
        });
    }

    /** The bound on a session decided closed: its peer neither closed nor (perhaps) read. */
    private void forceClose(ChannelHandlerContext ctx) {
        forceClose = null;
        if (!ctx.channel().isOpen()) {
            return;
        }
        LOG.debug("Force-closing {}: still open {} ms after its X ({})", ctx.channel().remoteAddress(),
                TimeUnit.NANOSECONDS.toMillis(shared.closeBoundNanos()),
                errorFlushed ? "flushed" : "never flushed: not reading");
        if (!errorFlushed) {
            // Reset: drop the unsent answers now instead of leaving them in the kernel for a peer that does not read.
            ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
        }
        ctx.close();
    }
}
