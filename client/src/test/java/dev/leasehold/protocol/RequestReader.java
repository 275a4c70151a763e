package dev.leasehold.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Incremental reader of client requests for JDK-only test doubles (fake servers, proxies, stubs):
 * the twin of {@link AnswerDecoder}, and with {@link AnswerWriter} the server side of the wire
 * for them. A test fixture, not part of the client jar (the server's tests get it through the
 * client's test jar). Feed it whatever bytes arrived; it keeps a partial frame between calls. It reads the layout of PROTOCOL.md section 3 the way section 2 demands: the
 * fixed header by its byte count (it may contain 0x0A), then the key up to the terminator.
 *
 * <p>It checks the framing only (op, terminator, key length, non-empty key); the argument and
 * UTF-8 rules of section 4 are the server's, whose Netty decoder applies them byte by byte with
 * its error codes. Not thread-safe: one instance per connection.
 */
public final class RequestReader {

    private static final int MAX_HEADER = 19;
    /** The largest value a frame can carry ({@code vlen} is a u16). */
    private static final int MAX_VALUE = 65535;

    private final int maxKeyBytes;
    /** Grows on demand up to header + key limit + terminator, so a large limit costs nothing until used. */
    private byte[] frame = new byte[64];
    private int filled;
    private RequestType type;
    /** Where the key starts: after the header and, in an {@code M}, its {@code vlen} bytes of value. */
    private int keyStart;

    /** A reader for keys up to {@link Wire#DEFAULT_MAX_KEY_BYTES}. */
    public RequestReader() {
        this(Wire.DEFAULT_MAX_KEY_BYTES);
    }

    public RequestReader(int maxKeyBytes) {
        if (maxKeyBytes < 1) {
            throw new IllegalArgumentException("maxKeyBytes must be at least 1, not " + maxKeyBytes);
        }
        this.maxKeyBytes = maxKeyBytes;
    }

    /**
     * Reads the next request from {@code in}, consuming its bytes, or returns {@code null} when
     * {@code in} ends inside a frame (the partial frame is kept for the next call).
     *
     * @throws ProtocolException on an unknown op, a keyless frame without its terminator, an
     *         empty key, or a key longer than the limit; the reader is then reset
     */
    public Request next(ByteBuffer in) throws ProtocolException {
        while (in.hasRemaining()) {
            byte b = in.get();
            if (filled == 0) {
                type = RequestType.fromByte(b & 0xFF);
                if (type == null) {
                    throw new ProtocolException(String.format("unknown request op 0x%02X", b & 0xFF));
                }
            }
            if (filled == frame.length) {
                frame = Arrays.copyOf(frame,
                        (int) Math.min((long) MAX_HEADER + MAX_VALUE + maxKeyBytes + 1, 2L * frame.length));
            }
            frame[filled++] = b;
            int header = type.headerBytes();
            if (filled == header) {
                // The value (PROTOCOL.md section 2, 1.4) is read by count: it may hold 0x0A too.
                keyStart = header + (type == RequestType.MILLI_ACQUIRE || type == RequestType.SET_VALUE
                        ? ((frame[header - 2] & 0xFF) << 8 | frame[header - 1] & 0xFF) : 0);
            }
            if (filled <= Math.max(header, keyStart)) {
                continue;
            }
            if (!type.hasKey() || b == Wire.TERMINATOR) {
                return complete(b);
            }
            if (filled - keyStart > maxKeyBytes) {
                filled = 0;
                throw new ProtocolException(type + " key longer than " + maxKeyBytes + " bytes");
            }
        }
        return null;
    }

    /** True while a frame has started but not finished. */
    public boolean hasPartialFrame() {
        return filled > 0;
    }

    private Request complete(byte last) throws ProtocolException {
        int header = type.headerBytes();
        int length = filled;
        filled = 0;
        if (last != Wire.TERMINATOR) {
            throw new ProtocolException(String.format("%s: expected 0x0A after the header, found 0x%02X", type,
                    last & 0xFF));
        }
        if (type.hasKey() && length == keyStart + 1) {
            throw new ProtocolException(type + " with an empty key");
        }
        ByteBuffer f = ByteBuffer.wrap(frame, 1, header - 1);
        byte[] key = type.hasKey() ? Arrays.copyOfRange(frame, keyStart, length - 1) : new byte[0];
        return switch (type) {
            case ACQUIRE -> new Request.Acquire(f.get() & 0xFF, f.get() & 0xFF, f.getLong(), key);
            case RELEASE -> new Request.Release(f.getLong(), key);
            case EXTEND -> new Request.Extend(f.get() & 0xFF, f.getLong(), key);
            case CHECK -> new Request.Check(f.getLong(), key);
            case PING -> new Request.Ping(f.getLong());
            case SHARED_ACQUIRE -> new Request.SharedAcquire(f.get() & 0xFF, f.get() & 0xFF, f.getLong(),
                    Short.toUnsignedInt(f.getShort()), key);
            case HELLO -> new Request.Hello(Short.toUnsignedInt(f.getShort()));
            case MILLI_ACQUIRE -> new Request.MilliAcquire(f.get() & 0xFF, Integer.toUnsignedLong(f.getInt()),
                    f.get() & 0xFF, f.getLong(), Short.toUnsignedInt(f.getShort()),
                    Arrays.copyOfRange(frame, header, keyStart), key);
            case WITHDRAW -> new Request.Withdraw(f.getLong(), key);
            case OBSERVE -> new Request.Observe(f.getLong(), key);
            case UNOBSERVE -> new Request.Unobserve(f.getLong());
            case SET_VALUE -> new Request.SetValue(f.getLong(), Arrays.copyOfRange(frame, header, keyStart), key);
        };
    }
}
