package dev.leasehold.server;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.Keys;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.AcquireResult;
import dev.leasehold.registry.ExtendResult;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.ReleaseResult;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandler;

/**
 * Handles one session's decoded requests in order: asks the registry and writes what it can
 * answer at once; queued Acquires are answered later by {@link SessionNotifier}. The answers of a
 * read batch are appended to one buffer ({@link Session#batch()}) that is written and flushed once
 * at the end of the batch.
 *
 * <p>Backpressure: while the channel's outbound buffer is above its high-water mark, the session
 * is not read, so a client that does not read its answers cannot make the server buffer them
 * without limit. The decoder is told ({@link RequestDecoder#readingPaused}), so the pause does
 * not count against the frame in progress.
 *
 * <p>An Extend whose new lease end passes the stored lease horizon
 * ({@link ExtendResult#EXTENDED_AFTER_WRITE}, rare: a lease longer than any in use) is answered
 * once the horizon store has written a horizon covering it; until then this session's later
 * requests are held (and reading paused), so answers naming the same token keep their request
 * order. The event loop does not wait: the store's thread hands the answer back to it.
 *
 * <h2>Closing after {@code X}</h2>
 * Bad input ({@link ProtocolError}): the session's waiters are dropped first (so none can be
 * granted any more), the answers owed to earlier frames are written (an {@code A} still waiting
 * for the lease horizon included: the {@code X} waits behind it), then {@code X}. From then
 * on nothing the client sends is executed, but the session is still <em>read</em>, and what
 * arrives is discarded: closing a socket with unread input makes the kernel send a reset, and a
 * reset makes the client's kernel drop the {@code X} and the answers it had not read yet. Once
 * {@code X} is flushed the server's side is shut down for writing (FIN; {@code close_notify}
 * first with TLS), the client reads everything up to the end of the stream, and the session
 * closes when the client closes its side. A client that does neither, or that does not even read
 * its answers so {@code X} is never flushed, is force-closed {@code closeBound} after the
 * decision (the frame timeout): its slot and its buffers are freed; when {@code X} is still
 * unflushed the close is a reset (SO_LINGER 0), so the kernel does not keep the unread answers
 * for a peer that will not read them either.
 *
 * <p>Protocol errors are logged through the shared, rate-limited {@link ProtocolErrorLog}.
 */
final class SessionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(SessionHandler.class);

    private final LockRegistry registry;
    private final NanoClock clock;
    private final ServerStats stats;
    private final KeyAcl acl;
    private final RequestDecoder decoder;
    private final ProtocolErrorLog errorLog;
    private final long closeBoundNanos;
    private final ServingGate gate;
    private KeyAcl.Grant grant;
    private Session session;
    /** An X was decided: nothing more is executed, input is discarded, the session is closing. */
    private boolean failed;
    private boolean errorFlushed;
    /** Requests decoded while an Extend's answer waits for the lease horizon; null when none waits. */
    private ArrayDeque<Object> held;
    private ScheduledFuture<?> forceClose;

    /**
     * @param acl key permissions per client identity, or null to allow every key
     * @param decoder this channel's decoder, told when reading pauses and resumes
     * @param errorLog the server's rate-limited log of protocol errors
     * @param closeBoundNanos how long a session decided closed may take to close by itself
     */
    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl, RequestDecoder decoder,
            ProtocolErrorLog errorLog, long closeBoundNanos) {
        this(registry, clock, stats, acl, decoder, errorLog, closeBoundNanos, ServingGate.SINGLE_NODE);
    }

    /** @param gate cluster mode: who serves, and when answers may be written (PROTOCOL.md section 10) */
    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl, RequestDecoder decoder,
            ProtocolErrorLog errorLog, long closeBoundNanos, ServingGate gate) {
        this.gate = gate;
        this.registry = registry;
        this.clock = clock;
        this.stats = stats;
        this.acl = acl;
        this.decoder = decoder;
        this.errorLog = errorLog;
        this.closeBoundNanos = closeBoundNanos;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        // Added by doOnConnection, when the channel is already active: channelActive won't come.
        session = new Session(ctx.channel());
        stats.sessionOpened();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        session.reading = true; // until channelReadComplete flushes: answers to this session join the batch
        if (failed) {
            return;
        }
        if (held != null) {
            held.add(msg);
            return;
        }
        handle(ctx, msg);
    }

    private void handle(ChannelHandlerContext ctx, Object msg) {
        if (acl != null && !(msg instanceof ProtocolError) && !permitted(ctx, msg)) {
            return;
        }
        if (gate != ServingGate.SINGLE_NODE && !(msg instanceof Request.Ping) && !(msg instanceof ProtocolError)
                && !mayServe(ctx)) {
            return;
        }
        if (msg instanceof Request.Acquire a) {
            acquire(ctx, a);
        } else if (msg instanceof Request.Release r) {
            // The read instant starts the hand-off gap of the waiter this Release may grant.
            AnswerType t = registry.release(r.key(), r.token(), clock.nanoTime()) == ReleaseResult.RELEASED
                    ? AnswerType.RELEASED : AnswerType.NOT_HELD;
            Answers.appendWithLong(session.batch(), t, r.token());
            session.writeBatchIfFull(ctx, gate);
        } else if (msg instanceof Request.Extend e) {
            ExtendResult result = registry.extend(e.key(), e.token(), e.leaseSeconds());
            if (result == ExtendResult.EXTENDED_AFTER_WRITE) {
                holdUntilDurable(ctx, e.token());
                return;
            }
            AnswerType t = result == ExtendResult.EXTENDED ? AnswerType.EXTENDED : AnswerType.NOT_HELD;
            Answers.appendWithLong(session.batch(), t, e.token());
            session.writeBatchIfFull(ctx, gate);
        } else if (msg instanceof Request.Ping p) {
            Answers.appendWithLong(session.batch(), AnswerType.PONG, p.nonce());
            session.writeBatchIfFull(ctx, gate);
        } else if (msg instanceof ProtocolError error) {
            reject(ctx, error);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * The ACL check, last of the checks on a frame (PROTOCOL.md section 4: after the key's UTF-8
     * check, which the decoder made). A denied key is {@code X 7}: the session closes, and the
     * log line names the client's identities and prefixes, with the key escaped.
     */
    private boolean permitted(ChannelHandlerContext ctx, Object msg) {
        byte[] key;
        if (msg instanceof Request.Acquire a) {
            key = a.key();
        } else if (msg instanceof Request.Release r) {
            key = r.key();
        } else if (msg instanceof Request.Extend e) {
            key = e.key();
        } else {
            return true; // Ping names no key
        }
        if (grant == null) {
            grant = acl.grantFor(ServerTls.peerCertificate(ctx.channel())); // once per session
        }
        if (grant.allows(key)) {
            return true;
        }
        reject(ctx, new ProtocolError(ErrorCode.FORBIDDEN, "forbidden"),
                "key " + Keys.printable(key) + " denied to " + grant.describe());
        return false;
    }

    private void acquire(ChannelHandlerContext ctx, Request.Acquire a) {
        AcquireResult result = registry.acquire(a.key(), a.waitSeconds(), a.leaseSeconds(), a.owner(),
                clock.nanoTime(), session);
        if (result instanceof AcquireResult.Granted g) {
            Answers.appendAcquired(session.batch(), a.owner(), g.token(), 0);
        } else if (result instanceof AcquireResult.TimedOut) {
            Answers.appendWithLong(session.batch(), AnswerType.TIMED_OUT, a.owner());
        } else if (result instanceof AcquireResult.Busy) {
            Answers.appendWithLong(session.batch(), AnswerType.BUSY, a.owner());
        } else {
            return; // Queued: SessionNotifier answers when the registry decides.
        }
        session.writeBatchIfFull(ctx, gate);
    }

    /** Holds this session's later requests until the lease horizon covers the Extend of {@code token}. */
    private void holdUntilDurable(ChannelHandlerContext ctx, long token) {
        held = new ArrayDeque<>();
        pauseReading(ctx);
        registry.whenLeasesDurable(onDisk -> ctx.executor().execute(() -> resume(ctx, token, onDisk)));
    }

    /** Answers the held Extend ({@code N} if the horizon write failed), then the requests held behind it. */
    private void resume(ChannelHandlerContext ctx, long token, boolean onDisk) {
        ArrayDeque<Object> queue = held;
        held = null;
        if (failed || !ctx.channel().isActive()) {
            return;
        }
        Answers.appendWithLong(session.batch(), onDisk ? AnswerType.EXTENDED : AnswerType.NOT_HELD, token);
        while (queue != null && !queue.isEmpty() && held == null && !failed) {
            handle(ctx, queue.poll());
        }
        if (held != null && queue != null) {
            held.addAll(queue); // another Extend waits now: the rest stays behind it, in order
        }
        session.writeBatch(ctx);
        ctx.flush();
        session.handoffsFlushed();
        if (held == null && !failed && ctx.channel().isWritable()) {
            resumeReading(ctx);
        }
    }

    private void reject(ChannelHandlerContext ctx, ProtocolError error) {
        reject(ctx, error, null);
    }

    /**
     * Cluster mode: a lock request is served only by the leader, and only in the epoch the
     * session was first served in. Otherwise {@code X 8} (never served here: nothing of this
     * session was executed) or {@code X 9} (served by this node while it led), then close.
     */
    private boolean mayServe(ChannelHandlerContext ctx) {
        long epoch = gate.epoch();
        if (gate.serving() && (session.servedEpoch == 0 || session.servedEpoch == epoch)) {
            session.servedEpoch = epoch;
            return true;
        }
        ErrorCode code = session.servedEpoch == 0 ? ErrorCode.NOT_LEADER : ErrorCode.LEADERSHIP_LOST;
        reject(ctx, new ProtocolError(code, gate.leaderHint()));
        return false;
    }

    /**
     * Cluster mode, leadership lost: drops this session's waiters and sends {@code X 9} (with the
     * new leader when known) after the answers already on their way. Event loop only.
     */
    void leadershipLost(ChannelHandlerContext ctx) {
        if (!failed) {
            reject(ctx, new ProtocolError(ErrorCode.LEADERSHIP_LOST, gate.leaderHint()));
        }
    }

    private void reject(ChannelHandlerContext ctx, ProtocolError error, String detail) {
        failed = true;
        registry.closeSession(session);
        stats.protocolError(error.code());
        session.flushBatch(ctx, gate); // answers to the frames before the bad one go first
        errorLog.closing(ctx.channel().remoteAddress(), error, detail);
        forceClose = ctx.executor().schedule(() -> forceClose(ctx), closeBoundNanos, TimeUnit.NANOSECONDS);
        resumeReading(ctx); // discard what still comes (the decoder has failed) rather than reset the connection
        // An A granted to an earlier frame may still wait for the lease horizon (written from the
        // store's thread), or in cluster mode for its commit: the X comes after it, so earlier
        // frames keep their answers. Always a task, never inline: the store's thread hands that A
        // to this event loop as a task queued before it reports the callback finished, so an X
        // written inline (the horizon already durable by then) could overtake it; a task queued
        // now runs after it.
        session.afterAnswers(ctx, gate, () -> registry.whenLeasesDurable(
                onDisk -> ctx.executor().execute(() -> sendError(ctx, error))));
    }

    private void sendError(ChannelHandlerContext ctx, ProtocolError error) {
        if (!ctx.channel().isActive()) {
            return;
        }
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
        log.debug("Force-closing {}: still open {} ms after its X ({})", ctx.channel().remoteAddress(),
                TimeUnit.NANOSECONDS.toMillis(closeBoundNanos), errorFlushed ? "flushed" : "never flushed: not reading");
        if (!errorFlushed) {
            // Reset: drop the unsent answers now instead of leaving them in the kernel for a peer that does not read.
            ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
        }
        ctx.close();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.flushBatch(ctx, gate);
        session.reading = false;
        if (!ctx.channel().isWritable()) {
            pauseReading(ctx);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (held != null) {
            ctx.fireChannelWritabilityChanged(); // reading resumes when the held Extend is answered
            return;
        }
        if (ctx.channel().isWritable()) {
            resumeReading(ctx);
        } else {
            pauseReading(ctx);
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Backpressure: the answers are not read, so stop reading requests. Not after X: input is discarded then. */
    private void pauseReading(ChannelHandlerContext ctx) {
        if (failed) {
            return;
        }
        ctx.channel().config().setAutoRead(false);
        decoder.readingPaused();
    }

    private void resumeReading(ChannelHandlerContext ctx) {
        if (ctx.channel().config().isAutoRead()) {
            return;
        }
        decoder.readingResumed(ctx);
        ctx.channel().config().setAutoRead(true);
        ctx.read();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        held = null;
        if (forceClose != null) {
            forceClose.cancel(false);
            forceClose = null;
        }
        session.discardBatch();
        registry.closeSession(session);
        stats.sessionClosed();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (isIoNoise(cause)) {
            // Resets, broken pipes, a bad TLS record: what a network or a hostile client can always cause.
            log.debug("I/O error on {}: {}", ctx.channel().remoteAddress(), cause.toString());
        } else {
            log.warn("Closing {} after an unexpected error", ctx.channel().remoteAddress(), cause);
        }
        ctx.close(); // channelInactive drops the session's waiters
    }

    /** IOException (ClosedChannelException, resets, SSLException included), also as a decoder's cause. */
    static boolean isIoNoise(Throwable cause) {
        return cause instanceof IOException
                || cause instanceof DecoderException && cause.getCause() instanceof IOException;
    }
}
