package dev.leasehold.server;

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
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Handles one session's decoded requests in order: asks the registry and writes what it can
 * answer at once; queued Acquires are answered later by {@link SessionNotifier}. The answers of a
 * read batch are appended to one buffer ({@link Session#batch()}) that is written and flushed once
 * at the end of the batch.
 *
 * <p>Backpressure: while the channel's outbound buffer is above its high-water mark, the session
 * is not read, so a client that does not read its answers cannot make the server buffer them
 * without limit.
 *
 * <p>Bad input ({@link ProtocolError}): the session's waiters are dropped first (so none can be
 * granted any more), then {@code X} is written and flushed, the channel closes, and one WARN line
 * names the peer.
 */
final class SessionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(SessionHandler.class);

    private final LockRegistry registry;
    private final NanoClock clock;
    private final ServerStats stats;
    private final KeyAcl acl;
    private final ServingGate gate;
    private KeyAcl.Grant grant;
    private Session session;
    private boolean failed;

    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats) {
        this(registry, clock, stats, null);
    }

    /** @param acl key permissions per client identity, or null to allow every key */
    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl) {
        this(registry, clock, stats, acl, ServingGate.SINGLE_NODE);
    }

    /** @param gate cluster mode: who serves, and when answers may be written (PROTOCOL.md section 10) */
    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl, ServingGate gate) {
        this.gate = gate;
        this.registry = registry;
        this.clock = clock;
        this.stats = stats;
        this.acl = acl;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        // Added by doOnConnection, when the channel is already active: channelActive won't come.
        session = new Session(ctx.channel());
        stats.sessionOpened();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (failed) {
            return;
        }
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
            AnswerType t = registry.release(r.key(), r.token()) == ReleaseResult.RELEASED
                    ? AnswerType.RELEASED : AnswerType.NOT_HELD;
            Answers.appendWithLong(session.batch(), t, r.token());
            session.writeBatchIfFull(ctx, gate);
        } else if (msg instanceof Request.Extend e) {
            AnswerType t = registry.extend(e.key(), e.token(), e.leaseSeconds()) == ExtendResult.EXTENDED
                    ? AnswerType.EXTENDED : AnswerType.NOT_HELD;
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
        failed = true;
        registry.closeSession(session);
        stats.protocolError(code);
        session.flushBatch(ctx, gate);
        String hint = gate.leaderHint();
        log.debug("{} {}: X {} {}", code, ctx.channel().remoteAddress(), code.code(), hint);
        session.afterAnswers(ctx, gate, () -> ctx.writeAndFlush(Answers.error(ctx.alloc(), code, hint))
                .addListener(ChannelFutureListener.CLOSE));
        return false;
    }

    /**
     * Cluster mode, leadership lost: drops this session's waiters and sends {@code X 9} after the
     * answers already on their way. Event loop only.
     */
    void leadershipLost(ChannelHandlerContext ctx) {
        if (failed) {
            return;
        }
        failed = true;
        registry.closeSession(session);
        stats.protocolError(ErrorCode.LEADERSHIP_LOST);
        session.flushBatch(ctx, gate);
        String hint = gate.leaderHint();
        session.afterAnswers(ctx, gate, () -> ctx.writeAndFlush(
                Answers.error(ctx.alloc(), ErrorCode.LEADERSHIP_LOST, hint)).addListener(ChannelFutureListener.CLOSE));
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

    private void reject(ChannelHandlerContext ctx, ProtocolError error) {
        reject(ctx, error, null);
    }

    private void reject(ChannelHandlerContext ctx, ProtocolError error, String detail) {
        failed = true;
        registry.closeSession(session);
        stats.protocolError(error.code());
        session.flushBatch(ctx, gate); // answers to the frames before the bad one go first
        log.warn("Closing {}: protocol error {} ({}){}", ctx.channel().remoteAddress(), error.code().code(),
                error.message(), detail == null ? "" : ": " + detail);
        session.afterAnswers(ctx, gate, () -> ctx.writeAndFlush(Answers.error(ctx.alloc(), error.code(), error.message()))
                .addListener(ChannelFutureListener.CLOSE));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.flushBatch(ctx, gate);
        if (!ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(false);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        boolean writable = ctx.channel().isWritable();
        ctx.channel().config().setAutoRead(writable);
        if (writable) {
            ctx.read();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        session.discardBatch();
        registry.closeSession(session);
        stats.sessionClosed();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Resets and broken pipes are ordinary I/O noise: close quietly, the waiters are dropped.
        log.debug("I/O error on {}: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
