package dev.leasehold.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The JDK request reader against the golden bytes of PROTOCOL.md, split at every byte. */
class RequestReaderTests {

    private static final String ACQUIRE = "410a1e0a0a0a0a0a0a0a0a6f72646572732f34320a";
    private static final String RELEASE = "5200000000000003e86f72646572732f34320a";
    private static final String EXTEND = "453c00000000000003e86f72646572732f34320a";
    private static final String PING = "5000000000000000070a";
    private static final String ACQUIRE_CAFE = "4100050000000000000001636166c3a90a";

    @Test
    void readsTheProtocolExamplesSplitAtEveryByte() throws Exception {
        byte[] all = HexFormat.of().parseHex(ACQUIRE + RELEASE + EXTEND + PING + ACQUIRE_CAFE);
        List<Request> expected = List.of(
                new Request.Acquire(10, 30, 0x0A0A0A0A0A0A0A0AL, Request.key("orders/42")),
                new Request.Release(1000, Request.key("orders/42")),
                new Request.Extend(60, 1000, Request.key("orders/42")),
                new Request.Ping(7),
                new Request.Acquire(0, 5, 1, Request.key("café")));
        for (int cut = 0; cut <= all.length; cut++) {
            RequestReader r = new RequestReader();
            List<Request> read = new ArrayList<>();
            readAll(r, ByteBuffer.wrap(all, 0, cut), read);
            readAll(r, ByteBuffer.wrap(all, cut, all.length - cut), read);
            assertThat(read).as("cut at %d", cut).isEqualTo(expected);
            assertThat(r.hasPartialFrame()).isFalse();
        }
    }

    @Test
    void readsByteByByte() throws Exception {
        byte[] all = HexFormat.of().parseHex(ACQUIRE + PING);
        RequestReader r = new RequestReader();
        List<Request> read = new ArrayList<>();
        for (byte b : all) {
            readAll(r, ByteBuffer.wrap(new byte[] {b}), read);
        }
        assertThat(read).hasSize(2);
        assertThat(read.get(1)).isEqualTo(new Request.Ping(7));
    }

    @Test
    void rejectsBadFramingAndResets() throws Exception {
        assertError("5a", "unknown request op 0x5A");
        assertError("5000000000000000077a", "expected 0x0A after the header, found 0x7A");
        assertError("5200000000000003e80a", "empty key");
        RequestReader small = new RequestReader(3);
        assertThatThrownBy(() -> small.next(ByteBuffer.wrap(HexFormat.of().parseHex("5200000000000003e861626364"))))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("longer than 3 bytes");
        assertThat(small.hasPartialFrame()).isFalse();
        assertThat(small.next(ByteBuffer.wrap(HexFormat.of().parseHex(PING)))).isEqualTo(new Request.Ping(7));
    }

    @Test
    void encodeThenReadIsTheIdentity() throws Exception {
        Request[] all = {new Request.Acquire(255, 1, -1L, Request.key("k\u0000\u00ff")),
                new Request.Release(Long.MAX_VALUE, Request.key("x")), new Request.Extend(7, 0x0A0AL, Request.key("y")),
                new Request.Ping(0x0A)};
        RequestReader r = new RequestReader();
        for (Request q : all) {
            assertThat(r.next(ByteBuffer.wrap(FrameWriter.encode(q)))).isEqualTo(q);
        }
    }

    private static void assertError(String hex, String message) {
        RequestReader r = new RequestReader();
        assertThatThrownBy(() -> r.next(ByteBuffer.wrap(HexFormat.of().parseHex(hex))))
                .isInstanceOf(ProtocolException.class).hasMessageContaining(message);
        assertThat(r.hasPartialFrame()).isFalse();
    }

    private static void readAll(RequestReader r, ByteBuffer in, List<Request> out) throws ProtocolException {
        Request q;
        while ((q = r.next(in)) != null) {
            out.add(q);
        }
    }
}
