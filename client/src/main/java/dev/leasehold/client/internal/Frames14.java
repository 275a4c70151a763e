package dev.leasehold.client.internal;

import java.nio.ByteBuffer;
import java.util.Arrays;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Wire;

/**
 * The client's half of the revision 1.4 frames for watches (PROTOCOL.md 16.1): {@code O} and
 * {@code U} requests, and their answers, the event {@code O watch ...} and {@code U watch}. Kept
 * here, beside the shared codec of {@code dev.leasehold.protocol}, until the server's half of
 * watches is merged there; {@link Decoder} reads these two answers and hands every other one to
 * an {@link AnswerDecoder}. (Values, {@code V}, are in the shared codec: {@code Request.SetValue},
 * {@code Answer.ValueSet}.)
 */
public final class Frames14 {

    /** Op of the {@code O} request and of an event. */
    static final byte OBSERVE = 'O';
    /** Op of the {@code U} request and answer. */
    static final byte UNOBSERVE = 'U';
    /** Longest value any 1.4 server may take (17.5: {@code max-value-bytes} is at most 1024). */
    public static final int MAX_VALUE_BYTES = 1024;

    /** An event's fixed header, op included (16.1): the value and 0x0A follow. */
    static final int EVENT_HEADER = 26;

    private Frames14() {
    }

    /** {@code O watch:u64 key \n} (16.1). */
    public static byte[] observe(long watch, byte[] key) {
        return ByteBuffer.allocate(9 + key.length + 1).put(OBSERVE).putLong(watch).put(key).put(Wire.TERMINATOR)
                .array();
    }

    /** {@code U watch:u64 \n} (16.1). */
    public static byte[] unobserve(long watch) {
        return ByteBuffer.allocate(10).put(UNOBSERVE).putLong(watch).put(Wire.TERMINATOR).array();
    }

    /** An answer of this file's frames. */
    public sealed interface Answer14 permits Event, Unobserved {
    }

    /**
     * An event of watch {@code watch} (16.2): {@code state} one of {@code F H D S G} as its wire
     * byte, {@code cause} 0 to 6, {@code flags} bit 0 coalesced.
     */
    public record Event(long watch, int state, int cause, int flags, long token, int count, int limit, byte[] value)
            implements Answer14 {

        @Override
        public boolean equals(Object o) {
            return o instanceof Event e && e.watch == watch && e.state == state && e.cause == cause
                    && e.flags == flags && e.token == token && e.count == count && e.limit == limit
                    && Arrays.equals(e.value, value);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(watch) * 31 + Long.hashCode(token);
        }

        @Override
        public String toString() {
            return "Event[watch=" + watch + ", state=" + (char) state + ", cause=" + cause + ", flags=" + flags
                    + ", token=" + token + ", count=" + count + ", limit=" + limit + ", vlen=" + value.length + "]";
        }
    }

    /** {@code U watch}: the watch's last frame. */
    public record Unobserved(long watch) implements Answer14 {
    }

    /**
     * Reads answers: the two of this file itself, every other through an {@link AnswerDecoder}.
     * Returns an {@link Answer} or an {@link Answer14}. Not thread-safe: one per connection.
     */
    public static final class Decoder {

        private final AnswerDecoder others = new AnswerDecoder();
        private final byte[] head = new byte[EVENT_HEADER];
        private int filled;
        private byte[] value;

        /** The next answer from {@code in}, or null when {@code in} ends inside a frame. */
        public Object next(ByteBuffer in) throws ProtocolException {
            while (in.hasRemaining()) {
                if (filled == 0 && (others.hasPartialFrame() || !own14(in.get(in.position())))) {
                    Answer a = others.next(in); // one frame at most, or all of in
                    if (a != null) {
                        return a;
                    }
                    continue;
                }
                Answer14 a = own(in.get());
                if (a != null) {
                    return a;
                }
            }
            return null;
        }

        private static boolean own14(byte op) {
            return op == OBSERVE || op == UNOBSERVE;
        }

        /** One byte of a {@code U} or event frame. */
        private Answer14 own(byte b) throws ProtocolException {
            byte op = filled == 0 ? b : head[0];
            if (op != OBSERVE) {
                head[filled++] = b;
                if (filled < 10) {
                    return null;
                }
                filled = 0;
                if (b != Wire.TERMINATOR) {
                    throw new ProtocolException("answer " + (char) op + " not terminated by 0x0A");
                }
                long id = ByteBuffer.wrap(head, 1, 8).getLong();
                return new Unobserved(id);
            }
            if (filled < EVENT_HEADER) {
                head[filled++] = b;
                if (filled == EVENT_HEADER) {
                    int vlen = Short.toUnsignedInt(ByteBuffer.wrap(head, 24, 2).getShort());
                    if (vlen > MAX_VALUE_BYTES) {
                        filled = 0;
                        throw new ProtocolException("event value of " + vlen + " bytes");
                    }
                    value = new byte[vlen];
                }
                return null;
            }
            int at = filled++ - EVENT_HEADER;
            if (at < value.length) {
                value[at] = b;
                return null;
            }
            filled = 0;
            if (b != Wire.TERMINATOR) {
                throw new ProtocolException("event not terminated by 0x0A");
            }
            ByteBuffer h = ByteBuffer.wrap(head);
            h.get();
            Event e = new Event(h.getLong(), h.get() & 0xFF, h.get() & 0xFF, h.get() & 0xFF, h.getLong(),
                    Short.toUnsignedInt(h.getShort()), Short.toUnsignedInt(h.getShort()), value);
            value = null;
            return e;
        }

        /** True while a frame has started but not finished. */
        public boolean hasPartialFrame() {
            return filled > 0 || others.hasPartialFrame();
        }
    }
}
