package dev.leasehold.server;

import java.util.HexFormat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/** Request and answer bytes as hex, for session tests on an {@link EmbeddedChannel}. */
final class EmbeddedWire {

    private static final HexFormat HEX = HexFormat.ofDelimiter(" ");

    private EmbeddedWire() {
    }

    /** Feeds the request bytes to the session, as if read from the socket. */
    static void write(EmbeddedChannel ch, String requestHex) {
        ch.writeInbound(Unpooled.wrappedBuffer(HEX.parseHex(requestHex)));
    }

    /** The bytes of {@code b} as this class writes them (released). */
    static String hexOf(ByteBuf b) {
        try {
            return HEX.withUpperCase().formatHex(ByteBufUtil.getBytes(b));
        } finally {
            b.release();
        }
    }

    /** Every byte the session has written back since the last call, one space between writes. */
    static String written(EmbeddedChannel ch) {
        StringBuilder out = new StringBuilder();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            if (!out.isEmpty() && b.isReadable()) {
                out.append(' ');
            }
            out.append(HEX.withUpperCase().formatHex(ByteBufUtil.getBytes(b)));
            b.release();
        }
        return out.toString();
    }
}
