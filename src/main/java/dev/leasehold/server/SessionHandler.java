package dev.leasehold.server;

import java.io.IOException;
import java.util.ArrayDeque;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.Keys;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;
import dev.leasehold.registry.AcquireResult;
import dev.leasehold.registry.ExtendResult;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.ReleaseResult;
import dev.leasehold.registry.SessionHandle;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;

/**
 * Handles one session's decoded requests in order: asks the registry and appends what it can
 * answer at once to the read batch ({@link ServerSession#batch()}), which the session's
 * {@link Outbox} sends at the end of the batch; queued Acquires are answered later by
 * {@link SessionNotifier}. Whether a request is served at all, and when answers may leave
 * (at once, or after their commit in cluster mode), is the outbox's call, never this class's.
 *
 * <p>Backpressure: while the channel's outbound buffer is above its high-water mark, the session
 * is not read, so a client that does not read its answers cannot make the server buffer them
 * without limit. The decoder is told ({@link RequestDecoder#readingPaused}), so the pause does
 * not count against the frame in progress.
 *
 * <p>An Extend whose new lease end passes the stored lease horizon
 * ({@link ExtendResult#EXTENDED_AFTER_WRITE}, rare: a lease longer than any in use) is answered
 * once the horizon store has written a horizon covering it; until then this session's later
 * requests wait behind it (and reading pauses), so answers naming the same token keep their
 * request order. The event loop does not wait: the store's thread hands the answer back to it.
 *
 * <p>Bad input ({@link ProtocolError}), a denied key and leadership lost close the session with
 * {@code X}, as {@link SessionCloser} describes.
 */
final class SessionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(SessionHandler.class);

    /**
     * What every session of one server shares.
     *
     * @param acl key permissions per client identity, or null to allow every key
     * @param errorLog the server's rate-limited log of protocol errors
     * @param closeBoundNanos how long a session decided closed may take to close by itself
     * @param outboxes single node or cluster: how sessions are served and answered
     * @param maxWaitMillis {@code leasehold.max-wait}, which a Hello reports (the decoder enforces it)
     * @param maxValueBytes {@code leasehold.max-value-bytes}, which a Hello reports (the decoder enforces it)
     * @param maxWatchesPerSession {@code leasehold.max-watches-per-session} (PROTOCOL.md 16.6)
     * @param maxWatchesTotal {@code leasehold.max-watches-total}
     */
    record Shared(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl, ProtocolErrorLog errorLog,
            long closeBoundNanos, Outboxes outboxes, long maxWaitMillis, int maxValueBytes, int maxWatchesPerSession,
            int maxWatchesTotal) {

        /** With the default watch limits. */
        Shared(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl, ProtocolErrorLog errorLog,
                long closeBoundNanos, Outboxes outboxes, long maxWaitMillis, int maxValueBytes) {
            this(registry, clock, stats, acl, errorLog, closeBoundNanos, outboxes, maxWaitMillis, maxValueBytes,
                    LeaseholdServer.Settings.DEFAULT_MAX_WATCHES_PER_SESSION,
                    LeaseholdServer.Settings.DEFAULT_MAX_WATCHES_TOTAL);
        }

        /** With the default {@code leasehold.max-wait}, {@code max-value-bytes} and watch limits (tests). */
        Shared(LockRegistry registry, NanoClock clock, ServerStats stats, KeyAcl acl, ProtocolErrorLog errorLog,
                long closeBoundNanos, Outboxes outboxes) {
            this(registry, clock, stats, acl, errorLog, closeBoundNanos, outboxes,
                    LeaseholdServer.Settings.DEFAULT_MAX_WAIT.toMillis(), LeaseholdServer.Settings.DEFAULT_MAX_VALUE_BYTES);
        }
    }

    private final Shared shared;
    private final LockRegistry registry;
    private final NanoClock clock;
    private final RequestDecoder decoder;
    private KeyAcl.Grant grant;
    private ServerSession session;
    private SessionWatches watches;
    private SessionCloser closer;
    /** An X was decided: nothing more is executed, input is discarded, the session is closing. */
    private boolean failed;
    /** Requests decoded while an Extend's answer waits for the lease horizon; null when none waits. */
    private ArrayDeque<Object> behindExtend;

    /** @param decoder this channel's decoder, told when reading pauses and resumes */
    SessionHandler(Shared shared, RequestDecoder decoder) {
        this.shared = shared;
        this.registry = shared.registry();
        this.clock = shared.clock();
        this.decoder = decoder;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        // Added by doOnConnection, when the channel is already active: channelActive won't come.
        session = new ServerSession(ctx.channel(), shared.outboxes());
        watches = new SessionWatches(shared, session);
        decoder.watchOpen(watches::isOpen);
        closer = new SessionCloser(shared, session, watches);
        shared.stats().sessionOpened();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        session.reading = true; // until channelReadComplete flushes: answers to this session join the batch
        if (failed) {
            return;
        }
        if (behindExtend != null) {
            behindExtend.add(msg);
            return;
        }
        handle(ctx, msg);
    }

    private void handle(ChannelHandlerContext ctx, Object msg) {
        if (session.peer() == SessionHandle.Peer.UNKNOWN) {
            describe(ctx); // on the first request: a TLS session's handshake is done by then
        }
        if (msg instanceof ProtocolError error) {
            reject(ctx, error, null);
            return;
        }
        if (shared.acl() != null && msg instanceof Request.Keyed keyed && !permitted(ctx, keyed)) {
            return;
        }
        ProtocolError refusal = session.outbox().refusal(msg);
        if (refusal != null) {
            reject(ctx, refusal, null);
            return;
        }
        if (!(msg instanceof Request request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        // No default: a new RequestType does not compile until it is served here.
        boolean waitsForHorizon = switch (request.type()) {
            case ACQUIRE, SHARED_ACQUIRE, MILLI_ACQUIRE -> acquire((Request.Acquiring) request);
            case WITHDRAW -> withdraw((Request.Withdraw) request);
            case HELLO -> hello((Request.Hello) request);
            case RELEASE -> release((Request.Release) request);
            case EXTEND -> extend(ctx, (Request.Extend) request);
            case CHECK -> check((Request.Check) request);
            case SET_VALUE -> setValue((Request.SetValue) request);
            case PING -> ping((Request.Ping) request);
            case OBSERVE -> observe(ctx, (Request.Observe) request);
            case UNOBSERVE -> unobserve((Request.Unobserve) request);
        };
        if (!waitsForHorizon && session.batchFull()) {
            session.outbox().batchFull(ctx);
        }
    }

    /**
     * The ACL check, last of the checks on a frame (PROTOCOL.md section 4: after the key's UTF-8
     * check, which the decoder made). A denied key is {@code X 7}: the session closes, and the
     * log line names the client's identities and prefixes, with the key escaped.
     */
    private boolean permitted(ChannelHandlerContext ctx, Request.Keyed request) {
        if (grant == null) {
            grant = shared.acl().grantFor(ServerTls.peerCertificate(ctx.channel())); // once per session
        }
        if (grant.allows(request.key())) {
            return true;
        }
        reject(ctx, new ProtocolError(ErrorCode.FORBIDDEN, ErrorCode.forbiddenMessage(request.key())),
                "key " + Keys.printable(request.key()) + " denied to " + grant.describe());
        return false;
    }

    /** Who this session is, for inspect: once per session, so a grant only copies a reference. */
    private void describe(ChannelHandlerContext ctx) {
        java.net.SocketAddress remote = ctx.channel().remoteAddress();
        String address = remote instanceof java.net.InetSocketAddress i
                ? i.getAddress().getHostAddress() + ":" + i.getPort() : String.valueOf(remote);
        java.security.cert.X509Certificate cert = ServerTls.peerCertificate(ctx.channel());
        session.describe(new SessionHandle.Peer(address,
                cert == null ? null : cert.getSubjectX500Principal().getName()));
    }

    // Each request's handler returns whether the session now waits for the lease horizon (only
    // an Extend may): then its answer, and the batch-full check, come when the horizon is written.

    /**
     * An acquire in any hold mode, its wait in seconds or milliseconds ({@code A}, {@code S},
     * {@code M}; PROTOCOL.md sections 3, 13 and 14): answered {@code A}, {@code T}, {@code B} or
     * {@code L} now, or later by the notifier when queued. An {@code M}'s value goes with its grant
     * (section 17).
     */
    private boolean acquire(Request.Acquiring a) {
        byte[] value = a instanceof Request.MilliAcquire m ? m.value() : null;
        AcquireResult result = registry.acquire(a.key(), a.mode(), a.waitMillis(), a.leaseSeconds(), a.owner(),
                clock.nanoTime(), session, value);
        if (result instanceof AcquireResult.Granted g) {
            Answers.appendAcquired(session.batch(), a.owner(), g.token(), 0);
        } else if (result instanceof AcquireResult.TimedOut) {
            Answers.appendWithLong(session.batch(), AnswerType.TIMED_OUT, a.owner());
        } else if (result instanceof AcquireResult.Busy) {
            Answers.appendWithLong(session.batch(), AnswerType.BUSY, a.owner());
        } else if (result instanceof AcquireResult.LimitMismatch m) {
            Answers.appendLimitMismatch(session.batch(), a.owner(), m.limit());
        } else if (!(result instanceof AcquireResult.Queued)) {
            throw new IllegalStateException("an acquire result this handler does not answer: " + result);
        }
        // Queued: SessionNotifier answers when the registry decides.
        return false;
    }

    /**
     * Withdraw (PROTOCOL.md section 15): no answer of its own. Each acquire it takes back gets its
     * {@code T} through {@link SessionNotifier}, as an acquire whose wait ran out; on this event
     * loop, while this batch is read, so the {@code T} joins this batch behind the answers before
     * it. No log write in a cluster: waiters are not replicated.
     */
    private boolean withdraw(Request.Withdraw w) {
        registry.withdraw(w.key(), w.owner(), session);
        return false;
    }

    /**
     * Hello (PROTOCOL.md 14.1): this server's revision and limits, at once, whatever revision the
     * client speaks; nothing is remembered.
     */
    private boolean hello(Request.Hello h) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("Hello from {} speaking revision 0x{}", session.peer().address(), Integer.toHexString(h.revision()));
        }
        Answers.appendHello(session.batch(), Wire.REVISION_1_4, shared.maxWaitMillis(), shared.maxValueBytes());
        return false;
    }

    private boolean release(Request.Release r) {
        // The read instant starts the hand-off gap of the waiter this Release may grant.
        AnswerType t = registry.release(r.key(), r.token(), clock.nanoTime()) == ReleaseResult.RELEASED
                ? AnswerType.RELEASED : AnswerType.NOT_HELD;
        Answers.appendWithLong(session.batch(), t, r.token());
        return false;
    }

    private boolean extend(ChannelHandlerContext ctx, Request.Extend e) {
        ExtendResult result = registry.extend(e.key(), e.token(), e.leaseSeconds());
        if (result == ExtendResult.EXTENDED_AFTER_WRITE) {
            waitForHorizon(ctx, e.token());
            return true;
        }
        AnswerType t = result == ExtendResult.EXTENDED ? AnswerType.EXTENDED : AnswerType.NOT_HELD;
        Answers.appendWithLong(session.batch(), t, e.token());
        return false;
    }

    private boolean check(Request.Check c) {
        AnswerType t = registry.check(c.key(), c.token()) ? AnswerType.CURRENT : AnswerType.NOT_HELD;
        Answers.appendWithLong(session.batch(), t, c.token());
        return false;
    }

    /**
     * Set value (PROTOCOL.md section 17): {@code V} if the token is the key's active exclusive grant,
     * else {@code N}. In a cluster the answer, either one, leaves once the decision has committed,
     * as a Release's does (the outbox holds the batch).
     */
    private boolean setValue(Request.SetValue v) {
        AnswerType t = registry.setValue(v.key(), v.token(), v.value()).isSet() ? AnswerType.VALUE_SET
                : AnswerType.NOT_HELD;
        Answers.appendWithLong(session.batch(), t, v.token());
        return false;
    }

    private boolean ping(Request.Ping p) {
        Answers.appendWithLong(session.batch(), AnswerType.PONG, p.nonce());
        return false;
    }

    /**
     * Observe (PROTOCOL.md section 16): {@code B watch}, or the watch starts and its first event
     * follows. An id still open is {@code X 3}; the decoder refuses it from the header already,
     * this catches an {@code O} that was decoded while an earlier one of the same id waited
     * behind an Extend.
     */
    private boolean observe(ChannelHandlerContext ctx, Request.Observe o) {
        if (watches.isOpen(o.watch())) {
            reject(ctx, new ProtocolError(ErrorCode.BAD_ARGUMENT, RequestDecoder.watchOpenMessage(o.watch())), null);
            return false;
        }
        watches.observe(o);
        return false;
    }

    /** Unobserve: {@code U watch} at once, open or not (16.1). */
    private boolean unobserve(Request.Unobserve u) {
        watches.unobserve(u);
        return false;
    }

    /**
     * The server drains (shutdown, 16.8): kept watch events are written, every watch ends, and
     * the session closes once everything before is flushed. Event loop only.
     */
    void draining(ChannelHandlerContext ctx) {
        watches.flushAndEnd();
        ctx.channel().writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER)
                .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
    }

    /** Watch events kept while this session's output is full: at most one per open watch (tests). */
    int keptWatchEvents() {
        return watches.keptEvents();
    }

    /** This session's later requests wait until the lease horizon covers the Extend of {@code token}. */
    private void waitForHorizon(ChannelHandlerContext ctx, long token) {
        behindExtend = new ArrayDeque<>();
        pauseReading(ctx);
        registry.whenLeasesDurable(onDisk -> ctx.executor().execute(() -> resume(ctx, token, onDisk)));
    }

    /** Answers the waiting Extend ({@code N} if the horizon write failed), then the requests behind it. */
    private void resume(ChannelHandlerContext ctx, long token, boolean onDisk) {
        ArrayDeque<Object> queue = behindExtend;
        behindExtend = null;
        if (failed || !ctx.channel().isActive()) {
            return;
        }
        Answers.appendWithLong(session.batch(), onDisk ? AnswerType.EXTENDED : AnswerType.NOT_HELD, token);
        while (queue != null && !queue.isEmpty() && behindExtend == null && !failed) {
            handle(ctx, queue.poll());
        }
        if (behindExtend != null && queue != null) {
            behindExtend.addAll(queue); // another Extend waits now: the rest stays behind it, in order
        }
        session.outbox().flush(ctx);
        if (behindExtend == null && !failed && ctx.channel().isWritable()) {
            resumeReading(ctx);
        }
    }

    /**
     * This node stopped serving (cluster mode): {@code X 9}, with the new leader when known, after
     * the answers already on their way; the session's waiters are dropped first. Event loop only.
     */
    void stoppedServing(ChannelHandlerContext ctx) {
        ProtocolError error = session.outbox().stoppedServing();
        if (error != null && !failed) {
            reject(ctx, error, null);
        }
    }

    /** @param detail for the log only (see {@link SessionCloser#close}), or null */
    private void reject(ChannelHandlerContext ctx, ProtocolError error, String detail) {
        failed = true;
        closer.close(ctx, error, detail);
        resumeReading(ctx); // discard what still comes (the decoder has failed) rather than reset the connection
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.outbox().flush(ctx);
        session.reading = false;
        if (!ctx.channel().isWritable()) {
            pauseReading(ctx);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && !failed) {
            watches.writable(); // kept watch events first (16.4)
        }
        if (behindExtend != null) {
            ctx.fireChannelWritabilityChanged(); // reading resumes when the waiting Extend is answered
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
        behindExtend = null;
        watches.endAll();
        closer.closed();
        session.discardBatch();
        registry.closeSession(session);
        shared.stats().sessionClosed();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (isIoNoise(cause)) {
            // Resets, broken pipes, a bad TLS record: what a network or a hostile client can always cause.
            LOG.debug("I/O error on {}: {}", ctx.channel().remoteAddress(), cause.toString());
        } else {
            LOG.warn("Closing {} after an unexpected error", ctx.channel().remoteAddress(), cause);
        }
        ctx.close(); // channelInactive drops the session's waiters
    }

    /** IOException (ClosedChannelException, resets, SSLException included), also as a decoder's cause. */
    static boolean isIoNoise(Throwable cause) {
        return cause instanceof IOException
                || cause instanceof DecoderException && cause.getCause() instanceof IOException;
    }
}
