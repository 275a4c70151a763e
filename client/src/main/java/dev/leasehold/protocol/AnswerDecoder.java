package dev.leasehold.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Incremental decoder of server answers for JDK-only readers (the client, tests, tools).
 * Feed it whatever bytes arrived; it keeps a partial frame between calls.
 *
 * <p>Not thread-safe: one instance per connection, used by its reader only.
 */
public final class AnswerDecoder {

    /** The longest {@code X} frame: op, code, message, terminator. */
    private static final int MAX_ERROR_FRAME = 2 + Wire.MAX_ERROR_MESSAGE_BYTES + 1;

    /** The frame being read; grows for an event with a long value (never shrinks). */
    private byte[] frame = new byte[Math.max(MAX_ERROR_FRAME, AnswerType.EVENT_HEADER_BYTES + 1)];
    private int filled;

    /**
     * Decodes the next answer from {@code in}, consuming its bytes, or returns {@code null} when
     * {@code in} ends inside a frame (the partial frame is kept for the next call).
     *
     * @throws ProtocolException on bytes no server answer can start with or end with
     */
    public Answer next(ByteBuffer in) throws ProtocolException {
        while (in.hasRemaining()) {
            byte b = in.get();
            frame[filled++] = b;
            AnswerType type = AnswerType.fromByte(frame[0]);
            if (type == null) {
                filled = 0;
                throw new ProtocolException(String.format("unknown answer op 0x%02X", frame[0] & 0xFF));
            }
            if (type == AnswerType.ERROR) {
                if (filled >= 3 && b == Wire.TERMINATOR) {
                    Answer a = new Answer.Error(frame[1] & 0xFF,
                            new String(frame, 2, filled - 3, StandardCharsets.UTF_8));
                    filled = 0;
                    return a;
                }
                if (filled == MAX_ERROR_FRAME) {
                    filled = 0;
                    throw new ProtocolException("error message longer than " + Wire.MAX_ERROR_MESSAGE_BYTES + " bytes");
                }
                continue;
            }
            if (type == AnswerType.EVENT) {
                Answer event = eventByte(b);
                if (event != null) {
                    return event;
                }
                continue;
            }
            if (filled == type.frameBytes()) {
                filled = 0;
                if (b != Wire.TERMINATOR) {
                    throw new ProtocolException("answer " + type + " not terminated by 0x0A");
                }
                return fixed(type);
            }
        }
        return null;
    }

    /** True while a frame has started but not finished. */
    public boolean hasPartialFrame() {
        return filled > 0;
    }

    /**
     * One more byte of an event (PROTOCOL.md 16.1): its 26-byte header, then {@code vlen} bytes of
     * value read by count (they may hold 0x0A), then 0x0A. The frame buffer grows to the event's
     * length once its {@code vlen} is known (at most 26 + 65535 + 1 bytes).
     */
    private Answer eventByte(byte b) throws ProtocolException {
        int header = AnswerType.EVENT_HEADER_BYTES;
        if (filled < header) {
            return null;
        }
        int vlen = ((frame[header - 2] & 0xFF) << 8) | (frame[header - 1] & 0xFF);
        int length = header + vlen + 1;
        if (filled == header && frame.length < length) {
            frame = java.util.Arrays.copyOf(frame, length);
        }
        if (filled < length) {
            return null;
        }
        filled = 0;
        if (b != Wire.TERMINATOR) {
            throw new ProtocolException("answer EVENT not terminated by 0x0A");
        }
        ByteBuffer f = ByteBuffer.wrap(frame, 1, header - 1);
        long watch = f.getLong();
        int state = f.get() & 0xFF;
        int cause = f.get() & 0xFF;
        int flags = f.get() & 0xFF;
        long token = f.getLong();
        int count = Short.toUnsignedInt(f.getShort());
        int limit = Short.toUnsignedInt(f.getShort());
        byte[] value = java.util.Arrays.copyOfRange(frame, header, header + vlen);
        return new Answer.Event(watch, state, cause, flags, token, count, limit, value);
    }

    private Answer fixed(AnswerType type) {
        ByteBuffer f = ByteBuffer.wrap(frame, 1, type.frameBytes() - 2);
        if (type == AnswerType.HELLO) {
            // The one answer whose body does not start with a u64.
            return new Answer.Hello(Short.toUnsignedInt(f.getShort()), Integer.toUnsignedLong(f.getInt()),
                    Short.toUnsignedInt(f.getShort()));
        }
        long first = f.getLong();
        return switch (type) {
            case ACQUIRED -> new Answer.Acquired(first, f.getLong(), Integer.toUnsignedLong(f.getInt()));
            case TIMED_OUT -> new Answer.TimedOut(first);
            case BUSY -> new Answer.Busy(first);
            case RELEASED -> new Answer.Released(first);
            case EXTENDED -> new Answer.Extended(first);
            case NOT_HELD -> new Answer.NotHeld(first);
            case CURRENT -> new Answer.Current(first);
            case PONG -> new Answer.Pong(first);
            case VALUE_SET -> new Answer.ValueSet(first);
            case LIMIT_MISMATCH -> new Answer.LimitMismatch(first, Short.toUnsignedInt(f.getShort()));
            case UNOBSERVED -> new Answer.Unobserved(first);
            case HELLO -> throw new IllegalStateException("decoded above");
            case ERROR, EVENT -> throw new IllegalStateException("variable-length");
        };
    }
}
