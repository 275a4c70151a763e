package dev.leasehold.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Writes requests into a {@link ByteBuffer} (big-endian, as the protocol requires): the client's
 * half of the request codec, whose other half is the server's {@code RequestDecoder}. Answers go
 * the other way: the server writes them ({@code server.Answers}) and the client reads them
 * ({@link AnswerDecoder}). Arguments are assumed valid: callers check them first (see
 * {@link Keys#problem}).
 */
public final class FrameWriter {

    private FrameWriter() {
    }

    /** Exact encoded length of a request. */
    public static int length(Request request) {
        return switch (request.type()) {
            case ACQUIRE -> RequestType.ACQUIRE.headerBytes() + ((Request.Acquire) request).key().length + 1;
            case RELEASE -> RequestType.RELEASE.headerBytes() + ((Request.Release) request).key().length + 1;
            case EXTEND -> RequestType.EXTEND.headerBytes() + ((Request.Extend) request).key().length + 1;
            case CHECK -> RequestType.CHECK.headerBytes() + ((Request.Check) request).key().length + 1;
            case PING -> RequestType.PING.headerBytes() + 1;
            case SHARED_ACQUIRE -> RequestType.SHARED_ACQUIRE.headerBytes()
                    + ((Request.SharedAcquire) request).key().length + 1;
            case HELLO -> RequestType.HELLO.headerBytes() + 1;
            case MILLI_ACQUIRE -> {
                Request.MilliAcquire m = (Request.MilliAcquire) request;
                yield RequestType.MILLI_ACQUIRE.headerBytes() + m.value().length + m.key().length + 1;
            }
            case WITHDRAW -> RequestType.WITHDRAW.headerBytes() + ((Request.Withdraw) request).key().length + 1;
            case OBSERVE -> RequestType.OBSERVE.headerBytes() + ((Request.Observe) request).key().length + 1;
            case UNOBSERVE -> RequestType.UNOBSERVE.headerBytes() + 1;
            case SET_VALUE -> {
                Request.SetValue v = (Request.SetValue) request;
                yield RequestType.SET_VALUE.headerBytes() + v.value().length + v.key().length + 1;
            }
        };
    }

    public static byte[] encode(Request request) {
        ByteBuffer buf = ByteBuffer.allocate(length(request));
        write(request, buf);
        return buf.array();
    }

    /**
     * Writes {@code request} at {@code out}'s position. The switch over {@link RequestType} has no
     * default: a new request type does not compile until its body layout is written here.
     */
    public static void write(Request request, ByteBuffer out) {
        out.put(request.type().op());
        ByteBuffer body = switch (request.type()) {
            case ACQUIRE -> acquireBody((Request.Acquire) request, out);
            case RELEASE -> releaseBody((Request.Release) request, out);
            case EXTEND -> extendBody((Request.Extend) request, out);
            case CHECK -> checkBody((Request.Check) request, out);
            case PING -> out.putLong(((Request.Ping) request).nonce());
            case SHARED_ACQUIRE -> sharedAcquireBody((Request.SharedAcquire) request, out);
            case HELLO -> out.putShort((short) ((Request.Hello) request).revision());
            case MILLI_ACQUIRE -> milliAcquireBody((Request.MilliAcquire) request, out);
            case WITHDRAW -> out.putLong(((Request.Withdraw) request).owner()).put(((Request.Withdraw) request).key());
            case OBSERVE -> out.putLong(((Request.Observe) request).watch()).put(((Request.Observe) request).key());
            case UNOBSERVE -> out.putLong(((Request.Unobserve) request).watch());
            case SET_VALUE -> setValueBody((Request.SetValue) request, out);
        };
        body.put(Wire.TERMINATOR);
    }

    private static ByteBuffer acquireBody(Request.Acquire a, ByteBuffer out) {
        return out.put((byte) a.waitSeconds()).put((byte) a.leaseSeconds()).putLong(a.owner()).put(a.key());
    }

    private static ByteBuffer sharedAcquireBody(Request.SharedAcquire a, ByteBuffer out) {
        return out.put((byte) a.waitSeconds()).put((byte) a.leaseSeconds()).putLong(a.owner())
                .putShort((short) a.limit()).put(a.key());
    }

    private static ByteBuffer milliAcquireBody(Request.MilliAcquire m, ByteBuffer out) {
        return out.put((byte) m.flags()).putInt((int) m.waitMillis()).put((byte) m.leaseSeconds()).putLong(m.owner())
                .putShort((short) m.limit()).putShort((short) m.value().length).put(m.value()).put(m.key());
    }

    private static ByteBuffer setValueBody(Request.SetValue v, ByteBuffer out) {
        return out.putLong(v.token()).putShort((short) v.value().length).put(v.value()).put(v.key());
    }

    private static ByteBuffer releaseBody(Request.Release r, ByteBuffer out) {
        return out.putLong(r.token()).put(r.key());
    }

    private static ByteBuffer checkBody(Request.Check c, ByteBuffer out) {
        return out.putLong(c.token()).put(c.key());
    }

    private static ByteBuffer extendBody(Request.Extend e, ByteBuffer out) {
        return out.put((byte) e.leaseSeconds()).putLong(e.token()).put(e.key());
    }

    /**
     * An error message as the wire allows it: newlines replaced, at most
     * {@link Wire#MAX_ERROR_MESSAGE_BYTES} bytes, never cutting a UTF-8 sequence.
     */
    public static byte[] errorMessageBytes(String message) {
        byte[] bytes = message.replace('\n', ' ').getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= Wire.MAX_ERROR_MESSAGE_BYTES) {
            return bytes;
        }
        int end = Wire.MAX_ERROR_MESSAGE_BYTES;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--; // back off to the start of a sequence
        }
        byte[] cut = new byte[end];
        System.arraycopy(bytes, 0, cut, 0, end);
        return cut;
    }
}
