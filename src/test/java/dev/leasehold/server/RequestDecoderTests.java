package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/** The request decoder against the golden bytes of PROTOCOL.md and every protocol error. */
class RequestDecoderTests {

    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** The request examples of PROTOCOL.md section 3, with what they must decode to. */
    static List<Object[]> examples() {
        return List.of(
                new Object[] {"41 0A 1E 0A 0A 0A 0A 0A 0A 0A 0A 6F 72 64 65 72 73 2F 34 32 0A",
                        new Request.Acquire(10, 30, 0x0A0A0A0A0A0A0A0AL, Request.key("orders/42"))},
                new Object[] {"52 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A",
                        new Request.Release(1000, Request.key("orders/42"))},
                new Object[] {"45 3C 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A",
                        new Request.Extend(60, 1000, Request.key("orders/42"))},
                new Object[] {"50 00 00 00 00 00 00 00 07 0A", new Request.Ping(7)},
                new Object[] {"43 00 00 00 00 00 00 03 E8 6F 72 64 65 72 73 2F 34 32 0A",
                        new Request.Check(1000, Request.key("orders/42"))},
                new Object[] {"43 00 00 00 00 00 00 00 0A 6B 0A", new Request.Check(10, Request.key("k"))},
                new Object[] {"41 00 05 00 00 00 00 00 00 00 01 63 61 66 C3 A9 0A",
                        new Request.Acquire(0, 5, 1, Request.key("café"))},
                // section 13.10
                new Object[] {"53 0A 1E 00 00 00 00 00 00 00 01 00 00 63 66 67 0A",
                        new Request.SharedAcquire(10, 30, 1, 0, Request.key("cfg"))},
                new Object[] {"53 00 05 0A 0A 0A 0A 0A 0A 0A 0A 00 04 61 70 69 0A",
                        new Request.SharedAcquire(0, 5, 0x0A0A0A0A0A0A0A0AL, 4, Request.key("api"))},
                // section 14.7 (the example with a value is valuesOnAServerThatTakesThem: values are off here)
                new Object[] {"48 01 04 0A", new Request.Hello(0x0104)},
                new Object[] {"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 00 6F 72 64 65 72 73 2F 34 32 0A",
                        Request.MilliAcquire.exclusive(200, 30, 1, Request.key("orders/42"))},
                new Object[] {"4D 01 00 00 05 DC 0A 00 00 00 00 00 00 00 02 00 00 00 00 63 66 67 0A",
                        Request.MilliAcquire.shared(1500, 10, 2, 0, Request.key("cfg"))},
                new Object[] {"4D 01 00 00 00 00 05 00 00 00 00 00 00 00 03 00 04 00 00 61 70 69 0A",
                        Request.MilliAcquire.shared(0, 5, 3, 4, Request.key("api"))},
                // section 15.7
                new Object[] {"57 00 00 00 00 00 00 00 01 6F 72 64 65 72 73 2F 34 32 0A",
                        new Request.Withdraw(1, Request.key("orders/42"))},
                new Object[] {"57 00 00 00 00 00 00 00 0A 6B 0A", new Request.Withdraw(10, Request.key("k"))},
                // section 16.9
                new Object[] {"4F 00 00 00 00 00 00 00 05 6C 65 61 64 0A", new Request.Observe(5, Request.key("lead"))},
                new Object[] {"4F 00 00 00 00 00 00 00 0A 6C 65 61 64 0A", new Request.Observe(10, Request.key("lead"))},
                new Object[] {"55 00 00 00 00 00 00 00 05 0A", new Request.Unobserve(5)});
    }

    @ParameterizedTest
    @MethodSource("examples")
    void decodesEachExampleWhole(String hex, Request expected) {
        EmbeddedChannel ch = channel(512);
        ch.writeInbound(buf(bytes(hex)));
        assertThat((Object) ch.readInbound()).isEqualTo(expected);
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("examples")
    void decodesEachExampleSplitAtEveryByteBoundary(String hex, Request expected) {
        byte[] frame = bytes(hex);
        for (int cut = 1; cut < frame.length; cut++) {
            EmbeddedChannel ch = channel(512);
            ch.writeInbound(buf(slice(frame, 0, cut)));
            assertThat((Object) ch.readInbound()).as("nothing before the frame is whole, cut %d", cut).isNull();
            ch.writeInbound(buf(slice(frame, cut, frame.length)));
            assertThat((Object) ch.readInbound()).as("cut at %d", cut).isEqualTo(expected);
            assertThat(ch.finish()).isFalse();
        }
    }

    @Test
    void decodesEveryExampleByteByByte() {
        EmbeddedChannel ch = channel(512);
        List<Object> got = new ArrayList<>();
        for (Object[] ex : examples()) {
            for (byte b : bytes((String) ex[0])) {
                ch.writeInbound(buf(new byte[] {b}));
                drain(ch, got);
            }
        }
        assertThat(got).containsExactlyElementsOf(examples().stream().map(e -> e[1]).toList());
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void decodesManyFramesFromOneBuffer() {
        StringBuilder all = new StringBuilder();
        List<Object> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            for (Object[] ex : examples()) {
                all.append(ex[0]).append(' ');
                expected.add(ex[1]);
            }
        }
        EmbeddedChannel ch = channel(512);
        ch.writeInbound(buf(bytes(all.toString())));
        List<Object> got = new ArrayList<>();
        drain(ch, got);
        assertThat(got).containsExactlyElementsOf(expected);
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void keyMayBeExactlyMaxKeyBytes() {
        byte[] frame = acquireWithKey("k".repeat(16));
        EmbeddedChannel ch = channel(16);
        ch.writeInbound(buf(frame));
        assertThat((Object) ch.readInbound()).isInstanceOf(Request.Acquire.class);
    }

    @Test
    void unknownOpIsErrorOneAtItsFirstByte() {
        assertError("5A", ErrorCode.UNKNOWN_OP, "0x5A");
    }

    /**
     * PROTOCOL.md 17.7: each {@code V} example, whole and split at every byte, its value read by
     * count (0x0A included) before the key.
     */
    @Test
    void setValueExamplesOfSection17() {
        Object[][] examples = {
            {"56 00 00 00 00 00 00 04 12 00 02 6E 32 6C 65 61 64 0A", new Request.SetValue(1042, Request.key("n2"), Request.key("lead"))},
            {"56 00 00 00 00 00 00 04 12 00 00 6C 65 61 64 0A", new Request.SetValue(1042, new byte[0], Request.key("lead"))},
            {"56 00 00 00 00 00 00 04 12 00 03 61 0A 62 6C 65 61 64 0A",
                new Request.SetValue(1042, new byte[] {'a', 0x0A, 'b'}, Request.key("lead"))},
        };
        for (Object[] e : examples) {
            byte[] frame = bytes((String) e[0]);
            assertDecodes(valueChannel(), (String) e[0], (Request) e[1]);
            for (int cut = 1; cut < frame.length; cut++) {
                EmbeddedChannel ch = valueChannel();
                ch.writeInbound(buf(slice(frame, 0, cut)));
                assertThat((Object) ch.readInbound()).as("%s cut %d", e[0], cut).isNull();
                ch.writeInbound(buf(slice(frame, cut, frame.length)));
                assertThat((Object) ch.readInbound()).as("%s cut %d", e[0], cut).isEqualTo(e[1]);
                ch.finishAndReleaseAll();
            }
        }
        // Values off (max-value-bytes 0): a V with vlen 0 is decoded as usual.
        assertDecodes(channel(512), "56 00 00 00 00 00 00 04 12 00 00 6C 65 61 64 0A",
                new Request.SetValue(1042, new byte[0], Request.key("lead")));
    }

    /**
     * PROTOCOL.md 17.5: a {@code V} whose {@code vlen} is above {@code max-value-bytes} is {@code X 3}
     * as soon as its 11th byte arrives, reading no value byte; with values off any {@code vlen} above 0.
     */
    @Test
    void aVHeaderWithVlenAboveMaxValueBytesIsErrorThreeAtItsEleventhByte() {
        String[][] bad = {{"56 00 00 00 00 00 00 04 12 01 01", "max-value-bytes (256)"}, {"56 00 00 00 00 00 00 04 12 04 01", "(256)"}};
        for (String[] b : bad) {
            byte[] header = bytes(b[0]);
            EmbeddedChannel ch = valueChannel();
            ch.writeInbound(buf(slice(header, 0, 10)));
            assertThat((Object) ch.readInbound()).isNull();
            ch.writeInbound(buf(slice(header, 10, 11)));
            ProtocolError e = ch.readInbound();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_ARGUMENT);
            assertThat(e.message()).contains("vlen").contains(b[1]);
            ch.finishAndReleaseAll();
        }
        EmbeddedChannel off = channel(512);
        off.writeInbound(buf(bytes("56 00 00 00 00 00 00 04 12 00 01")));
        assertThat(((ProtocolError) off.readInbound()).message()).contains("values are off");
        // 256 bytes of value: the largest this decoder takes.
        String full = "56 00 00 00 00 00 00 04 12 01 00 " + "0A ".repeat(256) + "6B 0A";
        assertDecodes(valueChannel(), full, new Request.SetValue(1042, filled(256, (byte) 0x0A), Request.key("k")));
    }

    private static byte[] filled(int n, byte b) {
        byte[] out = new byte[n];
        java.util.Arrays.fill(out, b);
        return out;
    }

    /** PROTOCOL.md 16.7: U has no key, the byte after its header must be 0x0A; an O needs a key. */
    @Test
    void anUnobserveWithoutItsTerminatorIsX6AndAnObserveWithoutAKeyIsX2() {
        assertError("55 00 00 00 00 00 00 00 05 41", ErrorCode.MISSING_TERMINATOR, "Unobserve");
        assertError("4F 00 00 00 00 00 00 00 05 0A", ErrorCode.BAD_KEY, "empty key");
    }

    /** PROTOCOL.md 16.7: an O naming a watch open on the session is X 3 from its header, before any key byte. */
    @Test
    void anObserveNamingAnOpenWatchIsX3FromTheHeaderAlone() {
        EmbeddedChannel ch = channel(512);
        ch.pipeline().get(RequestDecoder.class).watchOpen(id -> id == 5);
        ch.writeInbound(buf(bytes("4F 00 00 00 00 00 00 00 05")));
        ProtocolError e = ch.readInbound();
        assertThat(e.code()).isEqualTo(ErrorCode.BAD_ARGUMENT);
        assertThat(e.message()).contains("watch 5");
        ch.finishAndReleaseAll();
        EmbeddedChannel other = channel(512);
        other.pipeline().get(RequestDecoder.class).watchOpen(id -> id == 5);
        other.writeInbound(buf(bytes("4F 00 00 00 00 00 00 00 06 6B 0A")));
        assertThat((Object) other.readInbound()).isEqualTo(new Request.Observe(6, Request.key("k")));
        other.finishAndReleaseAll();
    }

    @Test
    void loneNewlineWhereAnOpIsExpectedIsAnUnknownOp() {
        assertError("0A", ErrorCode.UNKNOWN_OP, "0x0A");
    }

    @Test
    void emptyKeyIsErrorTwo() {
        assertError("52 00 00 00 00 00 00 00 01 0A", ErrorCode.BAD_KEY, "empty");
    }

    @Test
    void invalidUtf8KeysAreErrorTwo() {
        for (String badKey : List.of("C3", "C0 AF", "E0 80 AF", "ED A0 80", "F4 90 80 80", "FF", "80", "F0 9F 98")) {
            assertError("52 00 00 00 00 00 00 00 01 " + badKey + " 0A", ErrorCode.BAD_KEY, "UTF-8");
        }
    }

    @Test
    void leaseZeroIsErrorThreeInAcquireAndExtend() {
        assertError("41 05 00 00 00 00 00 00 00 00 01 6B 0A", ErrorCode.BAD_ARGUMENT, "lease");
        assertError("45 00 00 00 00 00 00 00 00 01 6B 0A", ErrorCode.BAD_ARGUMENT, "lease");
    }

    @Test
    void aSharedAcquiresLeaseZeroOrLimitAboveTheMaximumIsErrorThree() {
        assertError("53 05 00 00 00 00 00 00 00 00 01 00 00 6B 0A", ErrorCode.BAD_ARGUMENT, "lease");
        EmbeddedChannel ch = new EmbeddedChannel(new RequestDecoder(512, TIMEOUT_NANOS, System::nanoTime, 16));
        ch.writeInbound(buf(bytes("53 05 05 00 00 00 00 00 00 00 01 00 11 6B 0A")));
        ProtocolError e = ch.readInbound();
        assertThat(e.code()).isEqualTo(ErrorCode.BAD_ARGUMENT);
        assertThat(e.message()).contains("max-shared-holders-per-key").contains("16").contains("17");
        ch = new EmbeddedChannel(new RequestDecoder(512, TIMEOUT_NANOS, System::nanoTime, 16));
        ch.writeInbound(buf(bytes("53 05 05 00 00 00 00 00 00 00 01 00 10 6B 0A")));
        assertThat((Object) ch.readInbound()).isEqualTo(new Request.SharedAcquire(5, 5, 1, 16, Request.key("k")));
    }

    /**
     * PROTOCOL.md 14.4: every {@code X 3} of an {@code M} is decided from its 19-byte header alone,
     * as soon as the 19th byte arrives, reading nothing after it (the two headers of 14.7 first).
     */
    @Test
    void anMHeaderThatBreaksTheRulesIsErrorThreeAtItsNineteenthByte() {
        String[][] bad = {
            {"4D 00 00 36 EE 81 1E 00 00 00 00 00 00 00 01 00 00 00 00", "max-wait"}, // wait_ms 3600001
            {"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 04 01", "max-value-bytes"}, // vlen 1025
            {"4D 00 00 03 E4 19 1E 00 00 00 00 00 00 00 01 00 00 00 00", "max-wait"}, // 255001 ms
            {"4D 02 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 00", "reserved"}, // a reserved flag bit
            {"4D 80 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 00", "reserved"},
            {"4D 00 00 00 00 C8 00 00 00 00 00 00 00 00 01 00 00 00 00", "lease 0"},
            {"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 04 00 00", "exclusive"}, // limit on an exclusive M
            {"4D 01 00 00 00 C8 1E 00 00 00 00 00 00 00 01 04 01 00 00", "max-shared-holders-per-key"}, // 1025
            {"4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 01", "values are off"}, // vlen 1, values off
        };
        for (String[] b : bad) {
            byte[] header = bytes(b[0]);
            assertThat(header).hasSize(19);
            EmbeddedChannel ch = channel(512);
            ch.writeInbound(buf(slice(header, 0, 18)));
            assertThat((Object) ch.readInbound()).as("nothing before the 19th byte: %s", b[0]).isNull();
            ch.writeInbound(buf(slice(header, 18, 19)));
            ProtocolError e = ch.readInbound();
            assertThat(e).as(b[0]).isNotNull();
            assertThat(e.code()).as(b[0]).isEqualTo(ErrorCode.BAD_ARGUMENT);
            assertThat(e.message()).as(b[0]).contains(b[1]);
            ch.finishAndReleaseAll();
        }
        // The lowest and highest waits of this decoder's max-wait (255 s) pass.
        assertDecodes(channel(512), "4D 00 00 03 E4 18 1E 00 00 00 00 00 00 00 01 00 00 00 00 6B 0A",
                Request.MilliAcquire.exclusive(255_000, 30, 1, Request.key("k")));
        assertDecodes(channel(512), "4D 00 00 00 00 01 1E 00 00 00 00 00 00 00 01 00 00 00 00 6B 0A",
                Request.MilliAcquire.exclusive(1, 30, 1, Request.key("k")));
    }

    @Test
    void maxWaitIsTheDecodersSetting() {
        EmbeddedChannel ch = new EmbeddedChannel(new RequestDecoder(512, TIMEOUT_NANOS, System::nanoTime, 16,
                3_600_000, 0));
        assertDecodes(ch, "4D 00 00 36 EE 80 1E 00 00 00 00 00 00 00 01 00 00 00 00 6B 0A",
                Request.MilliAcquire.exclusive(3_600_000, 30, 1, Request.key("k")));
        // A shared M is checked against max-shared-holders-per-key as an S is.
        ch = new EmbeddedChannel(new RequestDecoder(512, TIMEOUT_NANOS, System::nanoTime, 16, 3_600_000, 0));
        ch.writeInbound(buf(bytes("4D 01 00 00 00 00 05 00 00 00 00 00 00 00 03 00 11")));
        assertThat((Object) ch.readInbound()).isNull();
        ch.writeInbound(buf(bytes("00 00")));
        assertThat(((ProtocolError) ch.readInbound()).message()).contains("max-shared-holders-per-key (16)");
    }

    /**
     * PROTOCOL.md 14.7's campaign example: on a decoder that takes values (this build's server
     * does not), the value is read by count, its 0x0A bytes included, then the key; a shared
     * {@code M} with a value is still {@code X 3}.
     */
    @Test
    void valuesOnADecoderThatTakesThem() {
        String campaign = "4D 00 00 03 E4 18 0F 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 02 6E 31 6C 65 61 64 0A";
        Request expected = new Request.MilliAcquire(0, 255_000, 15, 0x0A0A0A0A0A0A0A0AL, 0, Request.key("n1"),
                Request.key("lead"));
        byte[] frame = bytes(campaign);
        for (int cut = 1; cut < frame.length; cut++) {
            EmbeddedChannel ch = valueChannel();
            ch.writeInbound(buf(slice(frame, 0, cut)));
            assertThat((Object) ch.readInbound()).as("cut %d", cut).isNull();
            ch.writeInbound(buf(slice(frame, cut, frame.length)));
            assertThat((Object) ch.readInbound()).as("cut %d", cut).isEqualTo(expected);
        }
        // A value of 0x0A bytes only: read by count, not taken for the terminator.
        assertDecodes(valueChannel(), "4D 00 00 00 00 00 05 00 00 00 00 00 00 00 01 00 00 00 03 0A 0A 0A 6B 0A",
                new Request.MilliAcquire(0, 0, 5, 1, 0, new byte[] {10, 10, 10}, Request.key("k")));
        EmbeddedChannel ch = valueChannel();
        ch.writeInbound(buf(bytes("4D 01 00 00 00 00 05 00 00 00 00 00 00 00 01 00 00 00 01")));
        assertThat(((ProtocolError) ch.readInbound()).message()).contains("shared");
        ch = valueChannel();
        ch.writeInbound(buf(bytes("4D 00 00 00 00 00 05 00 00 00 00 00 00 00 01 01 01 00 01")));
        assertThat(((ProtocolError) ch.readInbound()).message()).contains("exclusive");
        ch = valueChannel();
        ch.writeInbound(buf(bytes("4D 00 00 00 00 00 05 00 00 00 00 00 00 00 01 00 00 01 01")));
        assertThat(((ProtocolError) ch.readInbound()).message()).contains("max-value-bytes (256)");
    }

    @Test
    void helloWithoutTerminatorIsErrorSixAndWithdrawChecksItsKey() {
        assertError("48 01 04 41", ErrorCode.MISSING_TERMINATOR, "Hello");
        assertError("57 00 00 00 00 00 00 00 01 0A", ErrorCode.BAD_KEY, "empty");
        assertError("57 00 00 00 00 00 00 00 01 C3 0A", ErrorCode.BAD_KEY, "UTF-8");
    }

    private static EmbeddedChannel valueChannel() {
        return new EmbeddedChannel(new RequestDecoder(512, TIMEOUT_NANOS, System::nanoTime, 16, 255_000, 256));
    }

    private static void assertDecodes(EmbeddedChannel ch, String hex, Request expected) {
        ch.writeInbound(buf(bytes(hex)));
        assertThat((Object) ch.readInbound()).as(hex).isEqualTo(expected);
        assertThat((Object) ch.readInbound()).isNull();
        ch.finishAndReleaseAll();
    }

    @Test
    void headerErrorWinsOverAKeyError() {
        // lease 0 (code 3) comes before the empty key (code 2) in byte order
        assertError("41 05 00 00 00 00 00 00 00 00 01 0A", ErrorCode.BAD_ARGUMENT, "lease");
    }

    @Test
    void keyPastMaxWithoutTerminatorIsErrorFourAsItArrives() {
        EmbeddedChannel ch = channel(8);
        ch.writeInbound(buf(bytes("52 00 00 00 00 00 00 00 01")));
        ch.writeInbound(buf("12345678".getBytes()));
        assertThat((Object) ch.readInbound()).isNull();
        ch.writeInbound(buf("9".getBytes())); // the 9th key byte: no terminator can come in time
        ProtocolError e = ch.readInbound();
        assertThat(e.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG);
        assertThat(e.message()).contains("8");
    }

    @Test
    void pingWithoutTerminatorIsErrorSix() {
        assertError("50 00 00 00 00 00 00 00 07 41", ErrorCode.MISSING_TERMINATOR, "0x41");
    }

    @Test
    void framesBeforeTheBadOneAreDecodedAndNothingAfterIt() {
        EmbeddedChannel ch = channel(512);
        ch.writeInbound(buf(bytes("50 00 00 00 00 00 00 00 01 0A  5A  50 00 00 00 00 00 00 00 02 0A")));
        assertThat((Object) ch.readInbound()).isEqualTo(new Request.Ping(1));
        assertThat(((ProtocolError) ch.readInbound()).code()).isEqualTo(ErrorCode.UNKNOWN_OP);
        ch.writeInbound(buf(bytes("50 00 00 00 00 00 00 00 03 0A")));
        assertThat((Object) ch.readInbound()).isNull();
        ch.finishAndReleaseAll();
    }

    // ------------------------------------------------------------ frame timer, on the channel's frozen clock

    @Test
    void halfSentFrameGetsErrorFiveAfterTheFrameTimeout() {
        EmbeddedChannel ch = timedChannel(50);
        ch.writeInbound(buf(bytes("41 0A 1E 00")));
        advance(ch, 49);
        assertThat((Object) ch.readInbound()).isNull();
        assertTimesOutAtTheNextMillisecond(ch);
    }

    @Test
    void frameTimeoutCountsFromTheFirstByteOfTheFrameInProgress() {
        EmbeddedChannel ch = timedChannel(200);
        ch.writeInbound(buf(bytes("50 00 00")));
        advance(ch, 120);
        ch.writeInbound(buf(bytes("00 00 00 00 00 01 0A 50 00"))); // first finishes, second starts
        assertThat((Object) ch.readInbound()).isEqualTo(new Request.Ping(1));
        advance(ch, 120); // the first frame's deadline passes; the second is only 120 ms old
        assertThat((Object) ch.readInbound()).isNull();
        advance(ch, 79);
        assertThat((Object) ch.readInbound()).isNull();
        assertTimesOutAtTheNextMillisecond(ch);
    }

    @Test
    void idleSessionIsNeverTimedOut() {
        EmbeddedChannel ch = timedChannel(30);
        ch.writeInbound(buf(bytes("50 00 00 00 00 00 00 00 07 0A")));
        assertThat((Object) ch.readInbound()).isEqualTo(new Request.Ping(7));
        advance(ch, 10_000);
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void frameTimerStopsWhileReadingIsPausedAndGoesOnWhereItStopped() {
        EmbeddedChannel ch = timedChannel(100);
        RequestDecoder decoder = ch.pipeline().get(RequestDecoder.class);
        ch.writeInbound(buf(bytes("41 0A 1E 00")));
        advance(ch, 60);
        decoder.readingPaused(); // backpressure: the rest of the frame waits in the receive buffer
        advance(ch, 60_000);
        assertThat((Object) ch.readInbound()).as("no X 5 while the server is not reading").isNull();
        decoder.readingResumed(ch.pipeline().context(decoder));
        advance(ch, 39);
        assertThat((Object) ch.readInbound()).as("60 + 39 ms of reading").isNull();
        advance(ch, 1);
        ProtocolError e = ch.readInbound();
        assertThat(e.code()).as("100 ms of reading").isEqualTo(ErrorCode.INCOMPLETE_FRAME);
        ch.finishAndReleaseAll();
    }

    @Test
    void frameFinishedAfterALongPauseIsDecoded() {
        EmbeddedChannel ch = timedChannel(100);
        RequestDecoder decoder = ch.pipeline().get(RequestDecoder.class);
        ch.writeInbound(buf(bytes("50 00 00 00")));
        advance(ch, 90);
        decoder.readingPaused();
        advance(ch, 30_000);
        decoder.readingResumed(ch.pipeline().context(decoder));
        ch.writeInbound(buf(bytes("00 00 00 00 09 0A")));
        assertThat((Object) ch.readInbound()).isEqualTo(new Request.Ping(9));
        advance(ch, 10_000);
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void pauseWithNoFrameInProgressCostsTheNextFrameNothing() {
        EmbeddedChannel ch = timedChannel(100);
        RequestDecoder decoder = ch.pipeline().get(RequestDecoder.class);
        decoder.readingPaused();
        advance(ch, 5_000);
        decoder.readingResumed(ch.pipeline().context(decoder));
        ch.writeInbound(buf(bytes("50 00")));
        advance(ch, 99);
        assertThat((Object) ch.readInbound()).isNull();
        advance(ch, 1);
        assertThat(((ProtocolError) ch.readInbound()).code()).isEqualTo(ErrorCode.INCOMPLETE_FRAME);
        ch.finishAndReleaseAll();
    }

    @Test
    void allInputIsReleased() {
        EmbeddedChannel ch = channel(512);
        ByteBuf in = buf(bytes("50 00 00 00 00 00 00 00 07 0A 5A 00 00"));
        ch.writeInbound(in);
        ch.finishAndReleaseAll();
        assertThat(in.refCnt()).isZero();
    }

    private static void assertError(String hex, ErrorCode code, String messagePart) {
        byte[] frame = bytes(hex);
        for (int cut = 0; cut < frame.length; cut++) {
            EmbeddedChannel ch = channel(512);
            List<Object> got = new ArrayList<>();
            if (cut > 0) {
                ch.writeInbound(buf(slice(frame, 0, cut)));
                drain(ch, got);
            }
            ch.writeInbound(buf(slice(frame, cut, frame.length)));
            drain(ch, got);
            assertThat(got).as("%s cut at %d", hex, cut).hasSize(1);
            ProtocolError e = (ProtocolError) got.get(0);
            assertThat(e.code()).as(hex).isEqualTo(code);
            assertThat(e.message()).as(hex).contains(messagePart);
            ch.finishAndReleaseAll();
        }
    }

    private static byte[] acquireWithKey(String key) {
        return dev.leasehold.protocol.FrameWriter.encode(new Request.Acquire(1, 1, 1, Request.key(key)));
    }

    private static void drain(EmbeddedChannel ch, List<Object> into) {
        Object o;
        while ((o = ch.readInbound()) != null) {
            into.add(o);
        }
    }

    private static EmbeddedChannel channel(int maxKeyBytes) {
        return new EmbeddedChannel(new RequestDecoder(maxKeyBytes, TIMEOUT_NANOS, System::nanoTime));
    }

    /**
     * A decoder whose frame timer reads the channel's own clock, frozen: {@link #advance} moves
     * the time it reads and the time its scheduled checks run at, together. No sleeping.
     */
    private static EmbeddedChannel timedChannel(long frameTimeoutMillis) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(new RequestDecoder(512, TimeUnit.MILLISECONDS.toNanos(frameTimeoutMillis),
                () -> ch.eventLoop().ticker().nanoTime()));
        return ch;
    }

    /** One more millisecond on the frozen clock ends the frame in progress with {@code X 5}. */
    private static void assertTimesOutAtTheNextMillisecond(EmbeddedChannel ch) {
        advance(ch, 1);
        ProtocolError e = ch.readInbound();
        assertThat(e).as("X 5 after the frame timeout").isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.INCOMPLETE_FRAME);
        ch.finishAndReleaseAll();
    }

    private static void advance(EmbeddedChannel ch, long millis) {
        ch.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        ch.runPendingTasks();
    }

    private static ByteBuf buf(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }

    private static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    private static byte[] slice(byte[] b, int from, int to) {
        return java.util.Arrays.copyOfRange(b, from, to);
    }
}
