package dev.leasehold.server;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Encodes answers straight into pooled buffers (no intermediate objects on the hot path): either
 * a buffer of their own, or appended to a session's batch ({@link Session#batch}).
 */
final class Answers {

    private Answers() {
    }

    static void appendAcquired(ByteBuf b, long owner, long token, long queuedMillis) {
        b.writeByte(AnswerType.ACQUIRED.op()).writeLong(owner).writeLong(token);
        b.writeInt((int) Math.min(queuedMillis, 0xFFFF_FFFFL)).writeByte(Wire.TERMINATOR);
    }

    /** {@code L owner limit}: a shared acquire's limit is not the key's (PROTOCOL.md 13.1). */
    static void appendLimitMismatch(ByteBuf b, long owner, int limit) {
        b.writeByte(AnswerType.LIMIT_MISMATCH.op()).writeLong(owner).writeShort(limit).writeByte(Wire.TERMINATOR);
    }

    static void appendWithLong(ByteBuf b, AnswerType type, long value) {
        b.writeByte(type.op()).writeLong(value).writeByte(Wire.TERMINATOR);
    }

    static ByteBuf acquired(ByteBufAllocator alloc, long owner, long token, long queuedMillis) {
        ByteBuf b = alloc.ioBuffer(AnswerType.ACQUIRED.frameBytes());
        appendAcquired(b, owner, token, queuedMillis);
        return b;
    }

    /** {@code T}, {@code B}, {@code R}, {@code E}, {@code N} and {@code P}: an op and one u64. */
    static ByteBuf withLong(ByteBufAllocator alloc, AnswerType type, long value) {
        ByteBuf b = alloc.ioBuffer(10);
        appendWithLong(b, type, value);
        return b;
    }

    static ByteBuf error(ByteBufAllocator alloc, ErrorCode code, String message) {
        byte[] text = FrameWriter.errorMessageBytes(message);
        ByteBuf b = alloc.ioBuffer(3 + text.length);
        b.writeByte(AnswerType.ERROR.op()).writeByte(code.code()).writeBytes(text).writeByte(Wire.TERMINATOR);
        return b;
    }
}
