package dev.leasehold.server;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;

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
 * soon as the byte arrives), header fields (3, decided from the fixed header alone: for an
 * {@code M} every rule of 14.4, for a {@code V} its {@code vlen} (17.5), before any byte of value
 * or key is read), an {@code M}'s or {@code V}'s value read by count (it may hold 0x0A), key
 * length as it arrives (4), the whole key at its terminator (2), the terminator of a keyless
 * frame (6). A frame not finished within
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

    private enum State { OP, HEADER, VALUE, KEY, TERMINATOR, FAILED }

    private final int maxKeyBytes;
    private final long frameTimeoutNanos;
    private final NanoClock clock;
    /** {@code leasehold.max-shared-holders-per-key}: an {@code S} with a larger limit is {@code X 3}. */
    private final int maxSharedLimit;
    /** {@code leasehold.max-wait} in ms: an {@code M} waiting longer is {@code X 3} (PROTOCOL.md 14.4). */
    private final long maxWaitMillis;
    /** {@code max-value-bytes}: an {@code M} or {@code V} with a longer value is {@code X 3} (17.5); 0: off. */
    private final int maxValueBytes;

    private State state = State.OP;
    private RequestType type;
    /** The wait of an acquire, in milliseconds whatever the frame carried. */
    private long waitMillis;
    private int lease;
    /** A shared acquire's limit. */
    private int limit;
    /** An {@code M}'s flags. */
    private int flags;
    /** An {@code M}'s or {@code V}'s value, read by count before its key; empty for none. */
    private byte[] value = NO_VALUE;
    /**
     * Owner (Acquire, Withdraw), token (Release, Extend, Check, set value), nonce (Ping) or revision (Hello):
     * the header's number, by op.
     */
    private long number;
    private int keyBytesScanned;
    /** Bytes of {@link #value} read so far. */
    private int valueRead;

    /** Reading time the frame in progress has used before the current stretch of reading. */
    private long frameReadNanos;
    /** Clock time when the current stretch of reading began (meaningless while paused). */
    private long readingSinceNanos;
    private boolean paused;
    private ScheduledFuture<?> frameTimer;
    /** Watch ids open on this session ({@link #watchOpen}); none until told. */
    private LongPredicate watchOpen = id -> false;

    private static final byte[] NO_VALUE = new byte[0];

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
        this(maxKeyBytes, frameTimeoutNanos, clock, maxSharedLimit, Wire.MIN_MAX_WAIT_MILLIS, 0);
    }

    /**
     * @param maxSharedLimit the largest limit of a shared acquire ({@code X 3} above it)
     * @param maxWaitMillis {@code leasehold.max-wait}: the longest {@code wait_ms} of an {@code M}
     * @param maxValueBytes {@code leasehold.max-value-bytes}: the longest value of an {@code M} or a
     *        {@code V}; 0 turns values off
     */
    RequestDecoder(int maxKeyBytes, long frameTimeoutNanos, NanoClock clock, int maxSharedLimit, long maxWaitMillis,
            int maxValueBytes) {
        this.maxSharedLimit = maxSharedLimit;
        this.maxWaitMillis = maxWaitMillis;
        this.maxValueBytes = maxValueBytes;
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
        if (state == State.VALUE) {
            readValue(in);
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
        int vlen = 0;
        number = switch (type) {
            case ACQUIRE -> {
                waitMillis = in.readUnsignedByte() * 1000L;
                lease = in.readUnsignedByte();
                yield in.readLong();
            }
            case SHARED_ACQUIRE -> {
                waitMillis = in.readUnsignedByte() * 1000L;
                lease = in.readUnsignedByte();
                long owner = in.readLong();
                limit = in.readUnsignedShort();
                yield owner;
            }
            case MILLI_ACQUIRE -> {
                flags = in.readUnsignedByte();
                waitMillis = in.readUnsignedInt();
                lease = in.readUnsignedByte();
                long owner = in.readLong();
                limit = in.readUnsignedShort();
                vlen = in.readUnsignedShort();
                yield owner;
            }
            case EXTEND -> {
                lease = in.readUnsignedByte();
                yield in.readLong();
            }
            case SET_VALUE -> {
                long token = in.readLong();
                vlen = in.readUnsignedShort();
                yield token;
            }
            case HELLO -> in.readUnsignedShort();
            case RELEASE, CHECK, PING, WITHDRAW, OBSERVE, UNOBSERVE -> in.readLong();
        };
        String bad = type == RequestType.MILLI_ACQUIRE ? milliHeaderProblem(vlen)
                : type == RequestType.SET_VALUE ? valueTooLong("V", vlen) : headerProblem();
        if (bad != null) {
            fail(in, out, ErrorCode.BAD_ARGUMENT, bad);
            return true;
        }
        value = NO_VALUE;
        keyBytesScanned = 0;
        if (vlen > 0) {
            value = new byte[vlen]; // at most maxValueBytes: checked above, before any value byte
            valueRead = 0;
            state = State.VALUE;
        } else {
            state = type.hasKey() ? State.KEY : State.TERMINATOR;
        }
        return true;
    }

    /** The {@code X 3} of an {@code A}, {@code S} or {@code E} header, or null. */
    private String headerProblem() {
        if ((type == RequestType.ACQUIRE || type == RequestType.SHARED_ACQUIRE || type == RequestType.EXTEND)
                && lease == 0) {
            return "lease 0 in " + name(type) + ": lease must be 1..255 seconds";
        }
        if (type == RequestType.SHARED_ACQUIRE && limit > maxSharedLimit) {
            return "limit " + limit + " in Shared acquire is above leasehold.max-shared-holders-per-key ("
                    + maxSharedLimit + ")";
        }
        if (type == RequestType.OBSERVE && watchOpen.test(number)) {
            return watchOpenMessage(number); // PROTOCOL.md 16.7: from the header, before the key
        }
        return null;
    }

    /** The {@code X 3} message of an {@code O} naming a watch open on its session. */
    static String watchOpenMessage(long watch) {
        return "watch " + Long.toUnsignedString(watch) + " in O is already open on this session";
    }

    /**
     * Tells the decoder which watch ids are open on its session, so an {@code O} naming one is
     * {@code X 3} from its header (PROTOCOL.md 16.7). Event loop only.
     */
    void watchOpen(LongPredicate isOpen) {
        this.watchOpen = isOpen;
    }

    /**
     * The {@code X 3} of an {@code M} header (PROTOCOL.md 14.4), or null: decided from these 19
     * bytes alone, so no value or key byte is read, and no value buffer is allocated, for a frame
     * that is refused.
     */
    private String milliHeaderProblem(int vlen) {
        boolean shared = (flags & Request.MilliAcquire.SHARED) != 0;
        if ((flags & ~Request.MilliAcquire.SHARED) != 0) {
            return String.format("flags 0x%02X in M: bits 1 to 7 are reserved and must be 0", flags);
        }
        if (waitMillis > maxWaitMillis) {
            return "wait_ms " + waitMillis + " in M is above leasehold.max-wait (" + maxWaitMillis + " ms)";
        }
        if (lease == 0) {
            return "lease 0 in M: lease must be 1..255 seconds";
        }
        if (!shared && limit != 0) {
            return "limit " + limit + " in an exclusive M: it must be 0";
        }
        if (shared && limit > maxSharedLimit) {
            return "limit " + limit + " in a shared M is above leasehold.max-shared-holders-per-key ("
                    + maxSharedLimit + ")";
        }
        if (vlen > maxValueBytes) {
            return valueTooLong("M", vlen);
        }
        if (shared && vlen > 0) {
            return "vlen " + vlen + " in a shared M: only an exclusive grant carries a value";
        }
        return null;
    }

    /**
     * The {@code X 3} of a {@code vlen} above {@code max-value-bytes} in an {@code M} or a {@code V}
     * header (PROTOCOL.md 17.5), or null: decided before any byte of the value is read.
     */
    private String valueTooLong(String op, int vlen) {
        if (vlen <= maxValueBytes) {
            return null;
        }
        return "vlen " + vlen + " in " + op + " is above leasehold.max-value-bytes (" + maxValueBytes
                + (maxValueBytes == 0 ? ": values are off on this server)" : ")");
    }

    /** Reads an {@code M}'s or {@code V}'s value by count: any bytes, 0x0A included (PROTOCOL.md section 2). */
    private void readValue(ByteBuf in) {
        int n = Math.min(in.readableBytes(), value.length - valueRead);
        in.readBytes(value, valueRead, n);
        valueRead += n;
        if (valueRead == value.length) {
            state = State.KEY;
        }
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
            case ACQUIRE -> new Request.Acquire((int) (waitMillis / 1000), lease, number, key);
            case SHARED_ACQUIRE -> new Request.SharedAcquire((int) (waitMillis / 1000), lease, number, limit, key);
            case MILLI_ACQUIRE -> new Request.MilliAcquire(flags, waitMillis, lease, number, limit, value, key);
            case WITHDRAW -> new Request.Withdraw(number, key);
            case RELEASE -> new Request.Release(number, key);
            case EXTEND -> new Request.Extend(lease, number, key);
            case CHECK -> new Request.Check(number, key);
            case OBSERVE -> new Request.Observe(number, key);
            case SET_VALUE -> new Request.SetValue(number, value, key);
            case PING, HELLO, UNOBSERVE -> throw new IllegalStateException(name(type) + " has no key");
        });
        value = NO_VALUE;
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
        out.add(switch (type) {
            case HELLO -> new Request.Hello((int) number);
            case UNOBSERVE -> new Request.Unobserve(number);
            default -> new Request.Ping(number);
        });
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
            case HELLO -> "Hello";
            case MILLI_ACQUIRE -> "M";
            case WITHDRAW -> "Withdraw";
            case OBSERVE -> "Observe";
            case UNOBSERVE -> "Unobserve";
            case SET_VALUE -> "V";
        };
    }
}
