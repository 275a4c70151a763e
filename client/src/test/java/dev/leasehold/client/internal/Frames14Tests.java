package dev.leasehold.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.ProtocolException;

/**
 * The frames of {@link Frames14} against the hex examples of PROTOCOL.md 16.9, read between the
 * shared codec's answers (the {@code V} of 17.7 among them) as a session reads them.
 */
class Frames14Tests {

    private static final byte[] LEAD = "lead".getBytes(StandardCharsets.UTF_8);

    @Test
    void encodesTheRequestExamples() {
        assertThat(hex(Frames14.observe(5, LEAD))).isEqualTo("4f00000000000000056c6561640a");
        assertThat(hex(Frames14.observe(10, LEAD))).isEqualTo("4f000000000000000a6c6561640a");
        assertThat(hex(Frames14.unobserve(5))).isEqualTo("5500000000000000050a");
    }

    @Test
    void decodesTheAnswerExamplesSplitAtEveryByte() throws Exception {
        String[] frames = {
            "4f000000000000000546000000000000000000000000000000000a",
            "4f00000000000000054801000000000000000412000100000002" + "6e31" + "0a",
            "4f00000000000000054805000000000000000412000100000002" + "6e32" + "0a",
            "4f000000000000000546020000000000000004120000000000000a",
            "4f000000000000000548010100000000000004140001000000000a",
            "4f000000000000000544030000000000000004140000000000000a",
            "4f000000000000000653010000000000000000070003000400000a",
            "5500000000000000050a",
            "4200000000000000050a",
            "5600000000000004120a",
        };
        List<Object> expected = List.of(
                new Frames14.Event(5, 'F', 0, 0, 0, 0, 0, new byte[0]),
                new Frames14.Event(5, 'H', 1, 0, 1042, 1, 0, bytes("n1")),
                new Frames14.Event(5, 'H', 5, 0, 1042, 1, 0, bytes("n2")),
                new Frames14.Event(5, 'F', 2, 0, 1042, 0, 0, new byte[0]),
                new Frames14.Event(5, 'H', 1, 1, 1044, 1, 0, new byte[0]),
                new Frames14.Event(5, 'D', 3, 0, 1044, 0, 0, new byte[0]),
                new Frames14.Event(6, 'S', 1, 0, 7, 3, 4, new byte[0]),
                new Frames14.Unobserved(5),
                new Answer.Busy(5),
                new Answer.ValueSet(1042));
        byte[] all = HexFormat.of().parseHex(String.join("", frames));
        for (int cut = 0; cut <= all.length; cut++) {
            Frames14.Decoder d = new Frames14.Decoder();
            List<Object> got = new ArrayList<>();
            drain(d, ByteBuffer.wrap(all, 0, cut), got);
            drain(d, ByteBuffer.wrap(all, cut, all.length - cut), got);
            assertThat(got).as("cut at %d", cut).isEqualTo(expected);
            assertThat(d.hasPartialFrame()).isFalse();
        }
    }

    @Test
    void aValueHolding0x0AIsReadByCount() throws Exception {
        byte[] frame = HexFormat.of().parseHex("4f0000000000000005480100000000000000041200010000000361" + "0a" + "620a");
        Object e = new Frames14.Decoder().next(ByteBuffer.wrap(frame));
        assertThat(e).isEqualTo(new Frames14.Event(5, 'H', 1, 0, 1042, 1, 0, new byte[] {'a', 0x0A, 'b'}));
    }

    @Test
    void anUnterminatedFrameIsRefused() {
        assertThatThrownBy(() -> new Frames14.Decoder().next(ByteBuffer.wrap(HexFormat.of().parseHex(
                "5500000000000000050b")))).isInstanceOf(ProtocolException.class);
    }

    private static void drain(Frames14.Decoder d, ByteBuffer in, List<Object> into) throws ProtocolException {
        Object a;
        while ((a = d.next(in)) != null) {
            into.add(a);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
