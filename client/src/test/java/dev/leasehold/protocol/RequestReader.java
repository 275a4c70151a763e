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

    private static final int MAX_HEADER = 13;

    private final int maxKeyBytes;
    /** Grows on demand up to header + key limit + terminator, so a large limit costs nothing until used. */
    private byte[] frame = new byte[64];
    private int filled;
    private RequestType type;

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
                frame = Arrays.copyOf(frame, (int) Math.min((long) MAX_HEADER + maxKeyBytes + 1, 2L * frame.length));
            }
            frame[filled++] = b;
            int header = type.headerBytes();
            if (filled <= header) {
                continue;
            }
            if (!type.hasKey() || b == Wire.TERMINATOR) {
                return complete(b);
            }
            if (filled - header > maxKeyBytes) {
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
        if (type.hasKey() && length == header + 1) {
            throw new ProtocolException(type + " with an empty key");
        }
        ByteBuffer f = ByteBuffer.wrap(frame, 1, header - 1);
        byte[] key = Arrays.copyOfRange(frame, header, length - 1);
        return switch (type) {
            case ACQUIRE -> new Request.Acquire(f.get() & 0xFF, f.get() & 0xFF, f.getLong(), key);
            case RELEASE -> new Request.Release(f.getLong(), key);
            case EXTEND -> new Request.Extend(f.get() & 0xFF, f.getLong(), key);
            case CHECK -> new Request.Check(f.getLong(), key);
            case PING -> new Request.Ping(f.getLong());
            case SHARED_ACQUIRE -> new Request.SharedAcquire(f.get() & 0xFF, f.get() & 0xFF, f.getLong(),
                    Short.toUnsignedInt(f.getShort()), key);
        };
    }
}
