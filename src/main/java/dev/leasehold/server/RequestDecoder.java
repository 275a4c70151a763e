package dev.leasehold.server;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.RequestType;
import dev.leasehold.protocol.Utf8;
import dev.leasehold.protocol.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * Decodes client frames: the op byte, then the fixed binary header <em>by byte count</em> (it may
 * contain 0x0A), then the key up to its 0x0A terminator. Emits {@link Request}s, one per
 * {@code decode} call so each is handled as soon as it is complete, or a single
 * {@link ProtocolError} after which all further input is discarded.
 *
 * <p>Checks run in byte order and the first failure wins (PROTOCOL.md section 4): the op (1, as
 * soon as the byte arrives), header fields (3), key length as it arrives (4), the whole key at
 * its terminator (2), the terminator of a keyless frame (6). A frame not finished within
 * {@code frameTimeout} of its first byte gets 5. An idle session (no partial frame) is never
 * timed out.
 *
 * <h2>The frame timer counts reading time only</h2>
 * While the server does not read the session ({@link #readingPaused}: backpressure, because the
 * client does not read its answers), the rest of a frame may sit in the server's own receive
 * buffer: the client sent it whole. So the frame's {@code frameTimeout} is measured in time the
 * server spent <em>reading</em> that session since the frame's first byte; it stops while reading
 * is paused and goes on where it stopped when reading resumes. A client that pauses reading for
 * any length of time and then reads again loses nothing. A slowloris (a frame trickled in byte by
 * byte) is still read at full speed, so it still gets 5 after {@code frameTimeout}.
 *
 * <p>Time comes from the injected {@link NanoClock}; the timer runs on the channel's executor and
 * re-checks the clock when it fires, so a test moves both (see {@code RequestDecoderTests}).
 *
 * <p>One instance per channel; all methods run on that channel's event loop.
 */
final class RequestDecoder extends ByteToMessageDecoder {

    private enum State { OP, HEADER, KEY, TERMINATOR, FAILED }

    private final int maxKeyBytes;
    private final long frameTimeoutNanos;
    private final NanoClock clock;
    /** {@code leasehold.max-shared-holders-per-key}: an {@code S} with a larger limit is {@code X 3}. */
    private final int maxSharedLimit;

    private State state = State.OP;
    private RequestType type;
    private int wait;
    private int lease;
    /** A shared acquire's limit. */
    private int limit;
    /** Owner (Acquire), token (Release, Extend) or nonce (Ping): the header's u64, by op. */
    private long number;
    private int keyBytesScanned;

    /** Reading time the frame in progress has used before the current stretch of reading. */
    private long frameReadNanos;
    /** Clock time when the current stretch of reading began (meaningless while paused). */
    private long readingSinceNanos;
    private boolean paused;
    private ScheduledFuture<?> frameTimer;

    /**
     * @param frameTimeoutNanos reading time a frame may take from its first byte to its last
     * @param clock the time the frame timer counts in (the event loop's time in production)
     */
    RequestDecoder(int maxKeyBytes, long frameTimeoutNanos, NanoClock clock) {
        this(maxKeyBytes, frameTimeoutNanos, clock, RegistryLimits.DEFAULT_MAX_SHARED_PER_KEY);
    }

    /**
     * @param maxSharedLimit the largest limit of a shared acquire ({@code X 3} above it)
     */
    RequestDecoder(int maxKeyBytes, long frameTimeoutNanos, NanoClock clock, int maxSharedLimit) {
        this.maxSharedLimit = maxSharedLimit;
        this.maxKeyBytes = maxKeyBytes;
        this.frameTimeoutNanos = frameTimeoutNanos;
        this.clock = clock;
    }

    /**
     * The session stops being read (backpressure): the frame in progress stops using its
     * {@code frameTimeout} until {@link #readingResumed}. Event loop only.
     */
    void readingPaused() {
        if (paused) {
            return;
        }
        paused = true;
        frameReadNanos += clock.nanoTime() - readingSinceNanos;
        cancelFrameTimer();
    }

    /** The session is read again: the frame in progress goes on using its timeout. Event loop only. */
    void readingResumed(ChannelHandlerContext ctx) {
        if (!paused) {
            return;
        }
        paused = false;
        readingSinceNanos = clock.nanoTime();
        if (frameInProgress()) {
            armFrameTimer(ctx);
        }
    }

    /** Reading time the frame in progress has used so far. */
    private long frameElapsedNanos() {
        return frameReadNanos + (paused ? 0 : clock.nanoTime() - readingSinceNanos);
    }

    private boolean frameInProgress() {
        return state != State.OP && state != State.FAILED;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (state == State.FAILED) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (state == State.OP && in.isReadable()) {
            int op = in.readUnsignedByte();
            frameReadNanos = 0;
            readingSinceNanos = clock.nanoTime();
            type = RequestType.fromByte(op);
            if (type == null) {
                fail(in, out, ErrorCode.UNKNOWN_OP, String.format("unknown op 0x%02X", op));
                return;
            }
            state = State.HEADER;
        }
        if (state == State.HEADER && !readHeader(in, out)) {
            armFrameTimer(ctx);
            return;
        }
        if (state == State.KEY) {
            readKey(in, out);
        } else if (state == State.TERMINATOR) {
            readTerminator(in, out);
        }
        if (frameInProgress()) {
            armFrameTimer(ctx);
        }
    }

    /** Reads the header after the op byte once it is all here; false while waiting for bytes. */
    private boolean readHeader(ByteBuf in, List<Object> out) {
        if (in.readableBytes() < type.headerBytes() - 1) {
            return false;
        }
        // A switch expression, so a new RequestType does not compile until its header is read here.
        number = switch (type) {
            case ACQUIRE -> {
                wait = in.readUnsignedByte();
                lease = in.readUnsignedByte();
                yield in.readLong();
            }
            case SHARED_ACQUIRE -> {
                wait = in.readUnsignedByte();
                lease = in.readUnsignedByte();
                long owner = in.readLong();
                limit = in.readUnsignedShort();
                yield owner;
            }
            case EXTEND -> {
                lease = in.readUnsignedByte();
                yield in.readLong();
            }
            case RELEASE, CHECK, PING -> in.readLong();
        };
        if ((type == RequestType.ACQUIRE || type == RequestType.SHARED_ACQUIRE || type == RequestType.EXTEND)
                && lease == 0) {
            fail(in, out, ErrorCode.BAD_ARGUMENT, "lease 0 in " + name(type) + ": lease must be 1..255 seconds");
            return true;
        }
        if (type == RequestType.SHARED_ACQUIRE && limit > maxSharedLimit) {
            fail(in, out, ErrorCode.BAD_ARGUMENT, "limit " + limit + " in Shared acquire is above "
                    + "leasehold.max-shared-holders-per-key (" + maxSharedLimit + ")");
            return true;
        }
        state = type.hasKey() ? State.KEY : State.TERMINATOR;
        keyBytesScanned = 0;
        return true;
    }

    private void readKey(ByteBuf in, List<Object> out) {
        int start = in.readerIndex();
        int available = Math.min(in.readableBytes(), maxKeyBytes + 1);
        int end = in.indexOf(start + keyBytesScanned, start + available, Wire.TERMINATOR);
        if (end < 0) {
            keyBytesScanned = available;
            if (available > maxKeyBytes) {
                fail(in, out, ErrorCode.FRAME_TOO_LONG,
                        "key passes max-key-bytes (" + maxKeyBytes + ") without a 0x0A terminator");
            }
            return;
        }
        int length = end - start;
        if (length == 0) {
            fail(in, out, ErrorCode.BAD_KEY, "empty key");
            return;
        }
        byte[] key = new byte[length];
        in.readBytes(key);
        in.skipBytes(1);
        if (!Utf8.isValid(key)) {
            fail(in, out, ErrorCode.BAD_KEY, "key of " + length + " bytes is not valid UTF-8");
            return;
        }
        out.add(switch (type) {
            case ACQUIRE -> new Request.Acquire(wait, lease, number, key);
            case SHARED_ACQUIRE -> new Request.SharedAcquire(wait, lease, number, limit, key);
            case RELEASE -> new Request.Release(number, key);
            case EXTEND -> new Request.Extend(lease, number, key);
            case CHECK -> new Request.Check(number, key);
            case PING -> throw new IllegalStateException("Ping has no key");
        });
        state = State.OP;
    }

    private void readTerminator(ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        int b = in.readUnsignedByte();
        if (b != Wire.TERMINATOR) {
            fail(in, out, ErrorCode.MISSING_TERMINATOR,
                    String.format("expected 0x0A after the %s header, found 0x%02X", name(type), b));
            return;
        }
        out.add(new Request.Ping(number));
        state = State.OP;
    }

    private void fail(ByteBuf in, List<Object> out, ErrorCode code, String message) {
        state = State.FAILED;
        in.skipBytes(in.readableBytes());
        cancelFrameTimer();
        out.add(new ProtocolError(code, message));
    }

    /**
     * Arms (once) a check that the frame in progress finishes within the frame timeout. Not while
     * paused: {@link #readingResumed} arms it.
     */
    private void armFrameTimer(ChannelHandlerContext ctx) {
        if (frameTimer != null || paused) {
            return;
        }
        long delay = frameTimeoutNanos - frameElapsedNanos();
        frameTimer = ctx.executor().schedule(() -> frameTimerFired(ctx), Math.max(0, delay), TimeUnit.NANOSECONDS);
    }

    private void frameTimerFired(ChannelHandlerContext ctx) {
        frameTimer = null;
        if (!frameInProgress() || paused || !ctx.channel().isActive()) {
            return;
        }
        if (frameElapsedNanos() < frameTimeoutNanos) {
            armFrameTimer(ctx); // the frame it watched finished; watch the one in progress now
            return;
        }
        state = State.FAILED;
        ctx.fireChannelRead(new ProtocolError(ErrorCode.INCOMPLETE_FRAME, name(type) + " frame not finished within "
                + TimeUnit.NANOSECONDS.toMillis(frameTimeoutNanos) + " ms of its first byte"));
        ctx.fireChannelReadComplete();
    }

    private void cancelFrameTimer() {
        if (frameTimer != null) {
            frameTimer.cancel(false);
            frameTimer = null;
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        cancelFrameTimer();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelFrameTimer();
        super.channelInactive(ctx);
    }

    private static String name(RequestType t) {
        return switch (t) {
            case ACQUIRE -> "Acquire";
            case RELEASE -> "Release";
            case EXTEND -> "Extend";
            case CHECK -> "Check";
            case PING -> "Ping";
            case SHARED_ACQUIRE -> "Shared acquire";
        };
    }
}
