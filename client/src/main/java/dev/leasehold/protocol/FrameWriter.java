package dev.leasehold.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Writes frames into a {@link ByteBuffer} (big-endian, as the protocol requires). Used by the
 * client for requests and by tests and tools for both directions. Arguments are assumed valid:
 * callers check them first (see {@link Keys#problem}).
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
        };
    }

    public static byte[] encode(Request request) {
        ByteBuffer buf = ByteBuffer.allocate(length(request));
        write(request, buf);
        return buf.array();
    }

    public static void write(Request request, ByteBuffer out) {
        out.put(request.type().op());
        if (request instanceof Request.Acquire a) {
            out.put((byte) a.waitSeconds()).put((byte) a.leaseSeconds()).putLong(a.owner()).put(a.key());
        } else if (request instanceof Request.Release r) {
            out.putLong(r.token()).put(r.key());
        } else if (request instanceof Request.Extend e) {
            out.put((byte) e.leaseSeconds()).putLong(e.token()).put(e.key());
        } else if (request instanceof Request.Check c) {
            out.putLong(c.token()).put(c.key());
        } else if (request instanceof Request.Ping p) {
            out.putLong(p.nonce());
        }
        out.put(Wire.TERMINATOR);
    }

    public static byte[] encode(Answer answer) {
        byte[] message = answer instanceof Answer.Error e ? errorMessageBytes(e.message()) : null;
        int len = message != null ? 2 + message.length + 1 : answer.type().frameBytes();
        ByteBuffer out = ByteBuffer.allocate(len);
        out.put(answer.type().op());
        if (answer instanceof Answer.Acquired a) {
            out.putLong(a.owner()).putLong(a.token()).putInt((int) a.queuedMs());
        } else if (answer instanceof Answer.TimedOut t) {
            out.putLong(t.owner());
        } else if (answer instanceof Answer.Busy b) {
            out.putLong(b.owner());
        } else if (answer instanceof Answer.Released r) {
            out.putLong(r.token());
        } else if (answer instanceof Answer.Extended e) {
            out.putLong(e.token());
        } else if (answer instanceof Answer.NotHeld n) {
            out.putLong(n.token());
        } else if (answer instanceof Answer.Current c) {
            out.putLong(c.token());
        } else if (answer instanceof Answer.Pong p) {
            out.putLong(p.nonce());
        } else if (answer instanceof Answer.Error e) {
            out.put((byte) e.code()).put(message);
        }
        out.put(Wire.TERMINATOR);
        return out.array();
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
