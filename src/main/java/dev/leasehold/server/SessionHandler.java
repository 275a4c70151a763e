package dev.leasehold.server;

import java.util.ArrayDeque;

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
 * <p>An Extend whose new lease end passes the stored lease horizon
 * ({@link ExtendResult#EXTENDED_AFTER_WRITE}, rare: a lease longer than any in use) is answered
 * once the horizon store has written a horizon covering it; until then this session's later
 * requests are held (and reading paused), so answers naming the same token keep their request
 * order. The event loop does not wait: the store's thread hands the answer back to it.
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
    private KeyAcl.Grant grant;
    private Session session;
    private boolean failed;
    /** Requests decoded while an Extend's answer waits for the lease horizon; null when none waits. */
    private ArrayDeque<Object> held;

    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats) {
        this(registry, clock, stats, null);
    }

    /** @param acl key permissions per client identity, or null to allow every key */
    SessionHandler(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl) {
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
        if (msg instanceof Request.Acquire a) {
            acquire(ctx, a);
        } else if (msg instanceof Request.Release r) {
            AnswerType t = registry.release(r.key(), r.token()) == ReleaseResult.RELEASED
                    ? AnswerType.RELEASED : AnswerType.NOT_HELD;
            Answers.appendWithLong(session.batch(), t, r.token());
            session.writeBatchIfFull(ctx);
        } else if (msg instanceof Request.Extend e) {
            ExtendResult result = registry.extend(e.key(), e.token(), e.leaseSeconds());
            if (result == ExtendResult.EXTENDED_AFTER_WRITE) {
                holdUntilDurable(ctx, e.token());
                return;
            }
            AnswerType t = result == ExtendResult.EXTENDED ? AnswerType.EXTENDED : AnswerType.NOT_HELD;
            Answers.appendWithLong(session.batch(), t, e.token());
            session.writeBatchIfFull(ctx);
        } else if (msg instanceof Request.Ping p) {
            Answers.appendWithLong(session.batch(), AnswerType.PONG, p.nonce());
            session.writeBatchIfFull(ctx);
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
        session.writeBatchIfFull(ctx);
    }

    /** Holds this session's later requests until the lease horizon covers the Extend of {@code token}. */
    private void holdUntilDurable(ChannelHandlerContext ctx, long token) {
        held = new ArrayDeque<>();
        ctx.channel().config().setAutoRead(false);
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
        if (held == null && !failed) {
            boolean writable = ctx.channel().isWritable();
            ctx.channel().config().setAutoRead(writable);
            if (writable) {
                ctx.read();
            }
        }
    }

    private void reject(ChannelHandlerContext ctx, ProtocolError error) {
        reject(ctx, error, null);
    }

    private void reject(ChannelHandlerContext ctx, ProtocolError error, String detail) {
        failed = true;
        registry.closeSession(session);
        stats.protocolError(error.code());
        session.writeBatch(ctx); // answers to the frames before the bad one go first
        log.warn("Closing {}: protocol error {} ({}){}", ctx.channel().remoteAddress(), error.code().code(),
                error.message(), detail == null ? "" : ": " + detail);
        // An A granted to an earlier frame may still wait for the lease horizon (written from the
        // store's thread): the X and the close come after it, so earlier frames keep their answers.
        registry.whenLeasesDurable(onDisk -> {
            if (ctx.executor().inEventLoop()) {
                sendErrorAndClose(ctx, error);
            } else {
                ctx.executor().execute(() -> sendErrorAndClose(ctx, error));
            }
        });
    }

    private static void sendErrorAndClose(ChannelHandlerContext ctx, ProtocolError error) {
        ctx.writeAndFlush(Answers.error(ctx.alloc(), error.code(), error.message()))
                .addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.writeBatch(ctx);
        ctx.flush();
        if (!ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(false);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (held != null) {
            ctx.fireChannelWritabilityChanged(); // reading resumes when the held Extend is answered
            return;
        }
        boolean writable = ctx.channel().isWritable();
        ctx.channel().config().setAutoRead(writable);
        if (writable) {
            ctx.read();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        held = null;
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
