package dev.leasehold.server;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The server's answer encoder, the only one that ships: every answer layout of PROTOCOL.md
 * (sections 3, 11, 13, 14 and 16) is written here and nowhere else in main code. The client reads them
 * with {@code AnswerDecoder}; the JDK test doubles write them with the test fixture
 * {@code AnswerWriter}, and {@code AnswersTests} holds both to the same golden bytes.
 *
 * <p>{@link #append(ByteBuf, Answer)} is the compiler-checked entry point: its switch over
 * {@link AnswerType} has no {@code default}, so a new answer type does not compile until its
 * layout is written here. The hot path (request handlers, {@code SessionNotifier}) calls the
 * per-layout appenders below with primitives instead, so no {@link Answer} record is allocated
 * per answer: answers go straight into pooled buffers, either one of their own or a session's
 * batch ({@link Session#batch}).
 */
final class Answers {

    /** {@code op u64 \n}: the length of every answer {@link #appendWithLong} writes. */
    private static final int WITH_LONG_BYTES = 10;

    private Answers() {
    }

    /**
     * Appends {@code answer}'s frame to {@code b} and returns {@code b}. Each answer type maps to
     * its layout's appender; a new {@link AnswerType} constant breaks the build here.
     */
    static ByteBuf append(ByteBuf b, Answer answer) {
        return switch (answer.type()) {
            case ACQUIRED -> {
                Answer.Acquired a = (Answer.Acquired) answer;
                yield appendAcquired(b, a.owner(), a.token(), a.queuedMs());
            }
            case TIMED_OUT -> appendWithLong(b, AnswerType.TIMED_OUT, ((Answer.TimedOut) answer).owner());
            case BUSY -> appendWithLong(b, AnswerType.BUSY, ((Answer.Busy) answer).owner());
            case LIMIT_MISMATCH -> {
                Answer.LimitMismatch m = (Answer.LimitMismatch) answer;
                yield appendLimitMismatch(b, m.owner(), m.limit());
            }
            case RELEASED -> appendWithLong(b, AnswerType.RELEASED, ((Answer.Released) answer).token());
            case EXTENDED -> appendWithLong(b, AnswerType.EXTENDED, ((Answer.Extended) answer).token());
            case NOT_HELD -> appendWithLong(b, AnswerType.NOT_HELD, ((Answer.NotHeld) answer).token());
            case CURRENT -> appendWithLong(b, AnswerType.CURRENT, ((Answer.Current) answer).token());
            case PONG -> appendWithLong(b, AnswerType.PONG, ((Answer.Pong) answer).nonce());
            case VALUE_SET -> appendWithLong(b, AnswerType.VALUE_SET, ((Answer.ValueSet) answer).token());
            case HELLO -> {
                Answer.Hello h = (Answer.Hello) answer;
                yield appendHello(b, h.revision(), h.maxWaitMillis(), h.maxValueBytes());
            }
            case ERROR -> {
                Answer.Error e = (Answer.Error) answer;
                yield appendError(b, e.code(), e.message());
            }
            case EVENT -> {
                Answer.Event e = (Answer.Event) answer;
                yield appendEvent(b, e.watch(), e.state(), e.cause(), e.flags(), e.token(), e.count(), e.limit(),
                        e.value());
            }
            case UNOBSERVED -> appendWithLong(b, AnswerType.UNOBSERVED, ((Answer.Unobserved) answer).watch());
        };
    }

    /** {@code A owner token queued_ms}: {@code queuedMillis} is capped at the u32's maximum. */
    static ByteBuf appendAcquired(ByteBuf b, long owner, long token, long queuedMillis) {
        b.writeByte(AnswerType.ACQUIRED.op()).writeLong(owner).writeLong(token);
        return b.writeInt((int) Math.min(queuedMillis, 0xFFFF_FFFFL)).writeByte(Wire.TERMINATOR);
    }

    /** {@code L owner limit}: a shared acquire's limit is not the key's (PROTOCOL.md 13.1). */
    static ByteBuf appendLimitMismatch(ByteBuf b, long owner, int limit) {
        return b.writeByte(AnswerType.LIMIT_MISMATCH.op()).writeLong(owner).writeShort(limit).writeByte(Wire.TERMINATOR);
    }

    /**
     * {@code H rev max_wait_ms max_value_bytes}: this server's revision and limits, answering a
     * Hello (PROTOCOL.md 14.1).
     */
    static ByteBuf appendHello(ByteBuf b, int revision, long maxWaitMillis, int maxValueBytes) {
        return b.writeByte(AnswerType.HELLO.op()).writeShort(revision).writeInt((int) maxWaitMillis)
                .writeShort(maxValueBytes).writeByte(Wire.TERMINATOR);
    }

    /**
     * {@code O watch state cause flags token count limit vlen value}: one event of a watch
     * (PROTOCOL.md 16.1), 27 + {@code value.length} bytes; {@code value} null or empty for none.
     */
    static ByteBuf appendEvent(ByteBuf b, long watch, int state, int cause, int flags, long token, int count,
            int limit, byte[] value) {
        int vlen = value == null ? 0 : value.length;
        b.writeByte(AnswerType.EVENT.op()).writeLong(watch).writeByte(state).writeByte(cause).writeByte(flags)
                .writeLong(token).writeShort(count).writeShort(limit).writeShort(vlen);
        if (vlen > 0) {
            b.writeBytes(value);
        }
        return b.writeByte(Wire.TERMINATOR);
    }

    /**
     * {@code T}, {@code B}, {@code R}, {@code E}, {@code N}, {@code C} and {@code P}: an op and one
     * u64 (an owner, a token or a nonce).
     */
    static ByteBuf appendWithLong(ByteBuf b, AnswerType type, long value) {
        assert type.frameBytes() == WITH_LONG_BYTES : type + " is not an op and one u64";
        return b.writeByte(type.op()).writeLong(value).writeByte(Wire.TERMINATOR);
    }

    /** {@code X code message}: the message as the wire allows it ({@link FrameWriter#errorMessageBytes}). */
    static ByteBuf appendError(ByteBuf b, int code, String message) {
        return appendError(b, code, FrameWriter.errorMessageBytes(message));
    }

    private static ByteBuf appendError(ByteBuf b, int code, byte[] text) {
        return b.writeByte(AnswerType.ERROR.op()).writeByte(code).writeBytes(text).writeByte(Wire.TERMINATOR);
    }

    static ByteBuf acquired(ByteBufAllocator alloc, long owner, long token, long queuedMillis) {
        return appendAcquired(alloc.ioBuffer(AnswerType.ACQUIRED.frameBytes()), owner, token, queuedMillis);
    }

    /** An answer of {@link #appendWithLong}'s layout in a buffer of its own. */
    static ByteBuf withLong(ByteBufAllocator alloc, AnswerType type, long value) {
        return appendWithLong(alloc.ioBuffer(WITH_LONG_BYTES), type, value);
    }

    /** The {@code X} frame the server sends before it closes a session. */
    static ByteBuf error(ByteBufAllocator alloc, ErrorCode code, String message) {
        byte[] text = FrameWriter.errorMessageBytes(message);
        return appendError(alloc.ioBuffer(3 + text.length), code.code(), text);
    }
}
