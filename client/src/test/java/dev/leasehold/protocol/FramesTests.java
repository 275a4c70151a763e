package dev.leasehold.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

/**
 * Request encoding and answer decoding against the golden bytes of PROTOCOL.md, and the test
 * fixtures that do the reverse for test doubles ({@link RequestReader}, {@link AnswerWriter})
 * against the same bytes. The server's answer encoder has its own golden tests ({@code AnswersTests}).
 */
class FramesTests {

    @Test
    void encodesTheRequestExamples() {
        assertThat(hex(FrameWriter.encode(new Request.Acquire(10, 30, 0x0A0A0A0A0A0A0A0AL, Request.key("orders/42")))))
                .isEqualTo("410a1e0a0a0a0a0a0a0a0a6f72646572732f34320a");
        assertThat(hex(FrameWriter.encode(new Request.Release(1000, Request.key("orders/42")))))
                .isEqualTo("5200000000000003e86f72646572732f34320a");
        assertThat(hex(FrameWriter.encode(new Request.Extend(60, 1000, Request.key("orders/42")))))
                .isEqualTo("453c00000000000003e86f72646572732f34320a");
        assertThat(hex(FrameWriter.encode(new Request.Ping(7)))).isEqualTo("5000000000000000070a");
        assertThat(hex(FrameWriter.encode(new Request.Check(1000, Request.key("orders/42")))))
                .isEqualTo("4300000000000003e86f72646572732f34320a");
        assertThat(hex(FrameWriter.encode(new Request.Check(10, Request.key("k"))))).isEqualTo("43000000000000000a6b0a");
        assertThat(hex(FrameWriter.encode(new Request.Acquire(0, 5, 1, Request.key("café")))))
                .isEqualTo("4100050000000000000001636166c3a90a");
    }

    @Test
    void decodesTheAcquiredExampleSplitAtEveryByte() throws Exception {
        byte[] frame = HexFormat.of().parseHex("410a0a0a0a0a0a0a0a00000000000003e8000000000a");
        for (int cut = 0; cut < frame.length; cut++) {
            AnswerDecoder d = new AnswerDecoder();
            assertThat(d.next(ByteBuffer.wrap(frame, 0, cut))).isNull();
            Answer a = d.next(ByteBuffer.wrap(frame, cut, frame.length - cut));
            assertThat(a).isEqualTo(new Answer.Acquired(0x0A0A0A0A0A0A0A0AL, 1000, 0));
        }
    }

    @Test
    void decodesTheCheckAnswerExamplesSplitAtEveryByte() throws Exception {
        byte[] current = HexFormat.of().parseHex("4300000000000003e80a");
        byte[] notCurrent = HexFormat.of().parseHex("4e00000000000003e80a");
        for (int cut = 0; cut < current.length; cut++) {
            AnswerDecoder d = new AnswerDecoder();
            assertThat(d.next(ByteBuffer.wrap(current, 0, cut))).isNull();
            assertThat(d.next(ByteBuffer.wrap(current, cut, current.length - cut))).isEqualTo(new Answer.Current(1000));
            assertThat(d.next(ByteBuffer.wrap(notCurrent))).isEqualTo(new Answer.NotHeld(1000));
        }
        assertThat(hex(AnswerWriter.encode(new Answer.Current(1000)))).isEqualTo("4300000000000003e80a");
    }

    @Test
    void sharedAcquireAndLimitMismatchMatchTheExamplesOfSection13() throws Exception {
        assertThat(hex(FrameWriter.encode(new Request.SharedAcquire(10, 30, 1, 0, Request.key("cfg")))))
                .isEqualTo("530a1e00000000000000010000636667" + "0a");
        assertThat(hex(FrameWriter.encode(new Request.SharedAcquire(0, 5, 0x0A0A0A0A0A0A0A0AL, 4, Request.key("api")))))
                .isEqualTo("5300050a0a0a0a0a0a0a0a0004617069" + "0a");
        byte[] l = HexFormat.of().parseHex("4c0000000000000001" + "00040a");
        for (int cut = 0; cut < l.length; cut++) {
            AnswerDecoder d = new AnswerDecoder();
            assertThat(d.next(ByteBuffer.wrap(l, 0, cut))).isNull();
            assertThat(d.next(ByteBuffer.wrap(l, cut, l.length - cut))).isEqualTo(new Answer.LimitMismatch(1, 4));
        }
        assertThat(AnswerWriter.encode(new Answer.LimitMismatch(1, 4))).isEqualTo(l);
        RequestReader reader = new RequestReader();
        assertThat(reader.next(ByteBuffer.wrap(HexFormat.of().parseHex("5300050a0a0a0a0a0a0a0a00046170690a"))))
                .isEqualTo(new Request.SharedAcquire(0, 5, 0x0A0A0A0A0A0A0A0AL, 4, Request.key("api")));
    }

    /** PROTOCOL.md 14.7: Hello and its answer, and every {@code M} example, both ways. */
    @Test
    void helloAndMilliAcquireMatchTheExamplesOfSection14() throws Exception {
        assertFrame(new Request.Hello(0x0104), "48 01 04 0A");
        byte[] hello = HexFormat.ofDelimiter(" ").parseHex("48 01 04 00 03 E4 18 01 00 0A");
        for (int cut = 0; cut < hello.length; cut++) {
            AnswerDecoder d = new AnswerDecoder();
            assertThat(d.next(ByteBuffer.wrap(hello, 0, cut))).isNull();
            assertThat(d.next(ByteBuffer.wrap(hello, cut, hello.length - cut)))
                    .isEqualTo(new Answer.Hello(0x0104, 255_000, 256));
        }
        assertThat(AnswerWriter.encode(new Answer.Hello(0x0104, 255_000, 256))).isEqualTo(hello);
        // A 1.3 server's answer to the same Hello, after which it closes the session.
        assertThat(new AnswerDecoder().next(ByteBuffer.wrap(HexFormat.ofDelimiter(" ")
                .parseHex("58 01 75 6E 6B 6E 6F 77 6E 20 6F 70 20 30 78 34 38 0A"))))
                .isEqualTo(new Answer.Error(1, "unknown op 0x48"));
        assertFrame(Request.MilliAcquire.exclusive(200, 30, 1, Request.key("orders/42")),
                "4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 00 6F 72 64 65 72 73 2F 34 32 0A");
        assertFrame(Request.MilliAcquire.shared(1500, 10, 2, 0, Request.key("cfg")),
                "4D 01 00 00 05 DC 0A 00 00 00 00 00 00 00 02 00 00 00 00 63 66 67 0A");
        assertFrame(Request.MilliAcquire.shared(0, 5, 3, 4, Request.key("api")),
                "4D 01 00 00 00 00 05 00 00 00 00 00 00 00 03 00 04 00 00 61 70 69 0A");
        assertFrame(new Request.MilliAcquire(0, 255_000, 15, 0x0A0A0A0A0A0A0A0AL, 0, Request.key("n1"),
                Request.key("lead")), "4D 00 00 03 E4 18 0F 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 02 6E 31 6C 65 61 64 0A");
        assertThat(Request.MilliAcquire.exclusive(200, 30, 1, Request.key("k")).mode()).isEqualTo(HoldMode.EXCLUSIVE);
        assertThat(Request.MilliAcquire.shared(0, 5, 3, 4, Request.key("k")).mode()).isEqualTo(HoldMode.permits(4));
        assertThat(Request.MilliAcquire.shared(0, 5, 3, 0, Request.key("k")).mode()).isEqualTo(HoldMode.READ);
        assertThat(new Request.Acquire(7, 5, 1, Request.key("k")).waitMillis()).isEqualTo(7000);
        assertThat(new Request.SharedAcquire(255, 5, 1, 0, Request.key("k")).waitMillis()).isEqualTo(255_000);
    }

    /** PROTOCOL.md 15.7: Withdraw, both examples (the second's header ends in 0x0A). */
    @Test
    void withdrawMatchesTheExamplesOfSection15() throws Exception {
        assertFrame(new Request.Withdraw(1, Request.key("orders/42")),
                "57 00 00 00 00 00 00 00 01 6F 72 64 65 72 73 2F 34 32 0A");
        assertFrame(new Request.Withdraw(10, Request.key("k")), "57 00 00 00 00 00 00 00 0A 6B 0A");
    }

    /**
     * PROTOCOL.md 17.7: set, clear and a value holding 0x0A, and both answers; the {@code M} with a
     * value of 14.7 is above.
     */
    @Test
    void setValueMatchesTheExamplesOfSection17() throws Exception {
        assertFrame(new Request.SetValue(1042, Request.key("n2"), Request.key("lead")),
                "56 00 00 00 00 00 00 04 12 00 02 6E 32 6C 65 61 64 0A");
        assertFrame(new Request.SetValue(1042, new byte[0], Request.key("lead")),
                "56 00 00 00 00 00 00 04 12 00 00 6C 65 61 64 0A");
        assertFrame(new Request.SetValue(1042, new byte[] {'a', 0x0A, 'b'}, Request.key("lead")),
                "56 00 00 00 00 00 00 04 12 00 03 61 0A 62 6C 65 61 64 0A");
        byte[] set = HexFormat.ofDelimiter(" ").parseHex("56 00 00 00 00 00 00 04 12 0A");
        byte[] notHeld = HexFormat.ofDelimiter(" ").parseHex("4E 00 00 00 00 00 00 04 12 0A");
        for (int cut = 0; cut < set.length; cut++) {
            AnswerDecoder d = new AnswerDecoder();
            assertThat(d.next(ByteBuffer.wrap(set, 0, cut))).isNull();
            assertThat(d.next(ByteBuffer.wrap(set, cut, set.length - cut))).isEqualTo(new Answer.ValueSet(1042));
            assertThat(d.next(ByteBuffer.wrap(notHeld))).isEqualTo(new Answer.NotHeld(1042));
        }
        assertThat(AnswerWriter.encode(new Answer.ValueSet(1042))).isEqualTo(set);
    }

    /**
     * PROTOCOL.md 16.9: the Observe and Unobserve frames, and the events of the examples read whole
     * and split at every byte, a value holding 0x0A included (read by count).
     */
    @Test
    void observeUnobserveAndEventsMatchTheExamplesOfSection16() throws Exception {
        assertFrame(new Request.Observe(5, Request.key("lead")), "4F 00 00 00 00 00 00 00 05 6C 65 61 64 0A");
        assertFrame(new Request.Observe(10, Request.key("lead")), "4F 00 00 00 00 00 00 00 0A 6C 65 61 64 0A");
        assertFrame(new Request.Unobserve(5), "55 00 00 00 00 00 00 00 05 0A");
        Object[][] answers = {
            {"4F 00 00 00 00 00 00 00 05 46 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0A",
                new Answer.Event(5, 'F', 0, 0, 0, 0, 0, new byte[0])},
            {"4F 00 00 00 00 00 00 00 05 48 01 00 00 00 00 00 00 00 04 12 00 01 00 00 00 02 6E 31 0A",
                new Answer.Event(5, 'H', 1, 0, 1042, 1, 0, Request.key("n1"))},
            {"4F 00 00 00 00 00 00 00 05 48 01 01 00 00 00 00 00 00 04 14 00 01 00 00 00 00 0A",
                new Answer.Event(5, 'H', 1, Answer.Event.COALESCED, 1044, 1, 0, new byte[0])},
            {"4F 00 00 00 00 00 00 00 06 53 01 00 00 00 00 00 00 00 00 07 00 03 00 04 00 00 0A",
                new Answer.Event(6, 'S', 1, 0, 7, 3, 4, new byte[0])},
            {"4F 00 00 00 00 00 00 00 05 48 05 00 00 00 00 00 00 00 04 12 00 01 00 00 00 02 0A 0A 0A",
                new Answer.Event(5, 'H', 5, 0, 1042, 1, 0, new byte[] {0x0A, 0x0A})},
            {"55 00 00 00 00 00 00 00 05 0A", new Answer.Unobserved(5)},
        };
        for (Object[] a : answers) {
            byte[] frame = HexFormat.ofDelimiter(" ").parseHex((String) a[0]);
            assertThat(AnswerWriter.encode((Answer) a[1])).isEqualTo(frame);
            for (int cut = 0; cut < frame.length; cut++) {
                AnswerDecoder d = new AnswerDecoder();
                assertThat(d.next(ByteBuffer.wrap(frame, 0, cut))).as("%s cut at %d", a[0], cut).isNull();
                assertThat(d.next(ByteBuffer.wrap(frame, cut, frame.length - cut))).as("%s cut at %d", a[0], cut)
                        .isEqualTo(a[1]);
                assertThat(d.hasPartialFrame()).isFalse();
            }
        }
        byte[] unterminated = HexFormat.ofDelimiter(" ").parseHex(
                "4F 00 00 00 00 00 00 00 05 46 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 41");
        assertThatThrownBy(() -> new AnswerDecoder().next(ByteBuffer.wrap(unterminated)))
                .isInstanceOf(ProtocolException.class);
        // A 1024-byte value: the frame buffer grows to it.
        byte[] big = new byte[1024];
        java.util.Arrays.fill(big, (byte) 0x0A);
        Answer.Event large = new Answer.Event(1, 'H', 1, 0, 1, 1, 0, big);
        assertThat(new AnswerDecoder().next(ByteBuffer.wrap(AnswerWriter.encode(large)))).isEqualTo(large);
    }

    /**
     * {@code request} encodes to {@code hexFrame}, and the test fixture {@link RequestReader} reads
     * it back from those bytes, whole and split at every byte.
     */
    private static void assertFrame(Request request, String hexFrame) throws Exception {
        byte[] frame = HexFormat.ofDelimiter(" ").parseHex(hexFrame);
        assertThat(FrameWriter.encode(request)).as("%s", request).isEqualTo(frame);
        for (int cut = 0; cut < frame.length; cut++) {
            RequestReader reader = new RequestReader();
            assertThat(reader.next(ByteBuffer.wrap(frame, 0, cut))).as("%s cut at %d", request, cut).isNull();
            assertThat(reader.next(ByteBuffer.wrap(frame, cut, frame.length - cut))).as("%s cut at %d", request, cut)
                    .isEqualTo(request);
        }
    }

    @Test
    void roundTripsEveryAnswer() throws Exception {
        Answer[] all = {new Answer.Acquired(1, 2, 4_000_000_000L), new Answer.TimedOut(3), new Answer.Busy(4),
                new Answer.Released(5), new Answer.Extended(6), new Answer.NotHeld(7), new Answer.Current(9), new Answer.Pong(8),
                new Answer.Error(2, "key of 3 bytes is not valid UTF-8"), new Answer.LimitMismatch(10, 65535),
                new Answer.Hello(0x0104, 3_600_000, 0), new Answer.ValueSet(11),
                new Answer.Event(12, 'H', 5, 1, 13, 1, 0, new byte[] {0x0A, 'v'}), new Answer.Unobserved(14)};
        ByteBuffer buf = ByteBuffer.allocate(1024);
        for (Answer a : all) {
            buf.put(AnswerWriter.encode(a));
        }
        buf.flip();
        AnswerDecoder d = new AnswerDecoder();
        for (Answer a : all) {
            assertThat(d.next(buf)).isEqualTo(a);
        }
        assertThat(d.hasPartialFrame()).isFalse();
    }

    @Test
    void errorMessagesAreCutAt200BytesWithoutSplittingACharacter() {
        byte[] cut = FrameWriter.errorMessageBytes("é".repeat(150));
        assertThat(cut.length).isLessThanOrEqualTo(Wire.MAX_ERROR_MESSAGE_BYTES);
        assertThat(Utf8.isValid(cut)).isTrue();
    }

    @Test
    void printableKeysEscapeControlCharacters() {
        assertThat(Keys.printable(Request.key("a\u0001b\"c"))).isEqualTo("\"a\\u0001b\\\"c\"");
        assertThat(Keys.printable(new byte[] {(byte) 0xFF, 'k'})).isEqualTo("\"\\xFFk\"");
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }
}
