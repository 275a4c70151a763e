package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.AnswerWriter;
import dev.leasehold.protocol.ErrorCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * The server's answer encoder against exact bytes, as they leave a channel: the hex examples of
 * PROTOCOL.md (sections 3, 11, 13.10 and 14.7) and every answer layout of its section 3 table, through
 * both the per-layout appenders the hot path calls and the {@link Answers#append} switch. Nothing
 * here decodes and re-encodes.
 */
class AnswersTests {

    /**
     * One golden frame per answer type. The switch has no default: a new {@link AnswerType} does not
     * compile until its golden bytes are written here (PROTOCOL.md first, then this, then
     * {@link Answers#append}).
     */
    static Golden golden(AnswerType type) {
        return switch (type) {
            // PROTOCOL.md 3: "Acquired, same owner, token 1000, granted at once"
            case ACQUIRED -> new Golden(new Answer.Acquired(0x0A0A0A0A0A0A0A0AL, 1000, 0),
                    "41 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 00 00 00 03 E8 00 00 00 00 0A");
            case TIMED_OUT -> new Golden(new Answer.TimedOut(7), "54 00 00 00 00 00 00 00 07 0A");
            case BUSY -> new Golden(new Answer.Busy(7), "42 00 00 00 00 00 00 00 07 0A");
            case RELEASED -> new Golden(new Answer.Released(1000), "52 00 00 00 00 00 00 03 E8 0A");
            case EXTENDED -> new Golden(new Answer.Extended(1000), "45 00 00 00 00 00 00 03 E8 0A");
            // PROTOCOL.md 11: "Current, token 1000"
            case CURRENT -> new Golden(new Answer.Current(1000), "43 00 00 00 00 00 00 03 E8 0A");
            // PROTOCOL.md 11: "not current"
            case NOT_HELD -> new Golden(new Answer.NotHeld(1000), "4E 00 00 00 00 00 00 03 E8 0A");
            case PONG -> new Golden(new Answer.Pong(7), "50 00 00 00 00 00 00 00 07 0A");
            case ERROR -> new Golden(new Answer.Error(ErrorCode.UNKNOWN_OP.code(), "unknown op 0x5A"),
                    "58 01 75 6E 6B 6E 6F 77 6E 20 6F 70 20 30 78 35 41 0A");
            // PROTOCOL.md 13.10: "limit mismatch, owner 1, the key's limit is 4"
            case LIMIT_MISMATCH -> new Golden(new Answer.LimitMismatch(1, 4), "4C 00 00 00 00 00 00 00 01 00 04 0A");
            // PROTOCOL.md 14.7: "a 1.4 server's answer (max-wait 255000 ms, max-value-bytes 256)"
            case HELLO -> new Golden(new Answer.Hello(0x0104, 255_000, 256), "48 01 04 00 03 E4 18 01 00 0A");
            // PROTOCOL.md 16.9: "Granted to token 1042 with the value n1 (cause 1, count 1, vlen 2)"
            case EVENT -> new Golden(new Answer.Event(5, 'H', 1, 0, 1042, 1, 0, new byte[] {0x6E, 0x31}),
                    "4F 00 00 00 00 00 00 00 05 48 01 00 00 00 00 00 00 00 04 12 00 01 00 00 00 02 6E 31 0A");
            // PROTOCOL.md 16.9: "unobserve watch 5 and its answer (the same bytes)"
            case UNOBSERVED -> new Golden(new Answer.Unobserved(5), "55 00 00 00 00 00 00 00 05 0A");
            // PROTOCOL.md 17.7: "Value set" of token 1042
            case VALUE_SET -> new Golden(new Answer.ValueSet(1042), "56 00 00 00 00 00 00 04 12 0A");
        };
    }

    record Golden(Answer answer, String hex) {
    }

    @Test
    void everyAnswerTypeThroughTheSwitchIsItsGoldenFrame() {
        for (AnswerType type : AnswerType.values()) {
            Golden g = golden(type);
            assertThat(g.answer().type()).isEqualTo(type);
            assertThat(sent(ch -> Answers.append(ch.alloc().buffer(), g.answer()))).as("%s", type).isEqualTo(g.hex());
            if (type.frameBytes() > 0) {
                assertThat(g.hex().split(" ")).as("%s frame length", type).hasSize(type.frameBytes());
            }
        }
    }

    /**
     * The test doubles write answers with the test fixture {@code AnswerWriter} (JDK only, from the
     * client's test jar); it must write what the server writes, byte for byte.
     */
    @Test
    void theTestDoublesAnswerWriterWritesWhatTheServerWrites() {
        for (AnswerType type : AnswerType.values()) {
            Answer a = golden(type).answer();
            assertThat(sent(ch -> Answers.append(ch.alloc().buffer(), a)))
                    .as("%s", type).isEqualTo(HexFormat.ofDelimiter(" ").withUpperCase().formatHex(AnswerWriter.encode(a)));
        }
    }

    @Test
    void acquiredExampleOfProtocolSectionThree() {
        // "Acquired, same owner, token 1000, granted at once"
        assertThat(sent(ch -> Answers.acquired(ch.alloc(), 0x0A0A0A0A0A0A0A0AL, 1000, 0)))
                .isEqualTo("41 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 00 00 00 03 E8 00 00 00 00 0A");
    }

    @Test
    void acquiredCarriesQueuedMillisAndCapsItAtU32() {
        assertThat(sent(ch -> Answers.acquired(ch.alloc(), 1, 2, 1234)))
                .isEqualTo("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 02 00 00 04 D2 0A");
        assertThat(sent(ch -> Answers.acquired(ch.alloc(), 1, 2, 1L << 40)))
                .isEqualTo("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 02 FF FF FF FF 0A");
    }

    @Test
    void everyAnswerWithOneU64() {
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.TIMED_OUT, 7))).isEqualTo("54 00 00 00 00 00 00 00 07 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.BUSY, 7))).isEqualTo("42 00 00 00 00 00 00 00 07 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.RELEASED, 1000))).isEqualTo("52 00 00 00 00 00 00 03 E8 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.EXTENDED, 1000))).isEqualTo("45 00 00 00 00 00 00 03 E8 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.NOT_HELD, 1000))).isEqualTo("4E 00 00 00 00 00 00 03 E8 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.CURRENT, 1000))).isEqualTo("43 00 00 00 00 00 00 03 E8 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.PONG, 0x0A))).isEqualTo("50 00 00 00 00 00 00 00 0A 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.PONG, -1))).isEqualTo("50 FF FF FF FF FF FF FF FF 0A");
    }

    @Test
    void helloExampleOfSectionFourteenAndThisBuildsHello() {
        // "a 1.4 server's answer (max-wait 255000 ms, max-value-bytes 256)"
        assertThat(sent(ch -> Answers.appendHello(ch.alloc().buffer(), 0x0104, 255_000, 256)))
                .isEqualTo("48 01 04 00 03 E4 18 01 00 0A");
        // Values off (max-value-bytes 0), max-wait at its ceiling of 3600 s; and the largest max-value-bytes.
        assertThat(sent(ch -> Answers.appendHello(ch.alloc().buffer(), 0x0104, 3_600_000, 0)))
                .isEqualTo("48 01 04 00 36 EE 80 00 00 0A");
        assertThat(sent(ch -> Answers.appendHello(ch.alloc().buffer(), 0x0104, 3_600_000,
                LeaseholdServer.Settings.MAX_MAX_VALUE_BYTES))).isEqualTo("48 01 04 00 36 EE 80 04 00 0A");
    }

    @Test
    void limitMismatchExampleOfSectionThirteenAndTheWholeU16() {
        // "limit mismatch, owner 1, the key's limit is 4"
        assertThat(sent(ch -> Answers.appendLimitMismatch(ch.alloc().buffer(), 1, 4)))
                .isEqualTo("4C 00 00 00 00 00 00 00 01 00 04 0A");
        assertThat(sent(ch -> Answers.appendLimitMismatch(ch.alloc().buffer(), 0x0A0A0A0A0A0A0A0AL, 65535)))
                .isEqualTo("4C 0A 0A 0A 0A 0A 0A 0A 0A FF FF 0A");
        assertThat(sent(ch -> Answers.appendLimitMismatch(ch.alloc().buffer(), 1, 0))).isEqualTo("4C 00 00 00 00 00 00 00 01 00 00 0A");
    }

    @Test
    void errorCarriesCodeAndMessageWithoutNewlines() {
        assertThat(sent(ch -> Answers.error(ch.alloc(), ErrorCode.UNKNOWN_OP, "unknown op 0x5A")))
                .isEqualTo("58 01 75 6E 6B 6E 6F 77 6E 20 6F 70 20 30 78 35 41 0A");
        String sent = sent(ch -> Answers.error(ch.alloc(), ErrorCode.INCOMPLETE_FRAME, "x".repeat(500)));
        assertThat(sent).startsWith("58 05 78");
        assertThat(sent.split(" ")).as("X message at most 200 bytes").hasSize(2 + 200 + 1);
        assertThat(sent(ch -> Answers.error(ch.alloc(), ErrorCode.BAD_KEY, "a\nb"))).doesNotContain("0A 62").endsWith("0A");
        assertThat(sent(ch -> Answers.error(ch.alloc(), ErrorCode.NOT_LEADER, ""))).isEqualTo("58 08 0A");
    }

    @Test
    void answersAppendedToABatchAreTheSameBytesBackToBack() {
        assertThat(sent(ch -> {
            ByteBuf batch = ch.alloc().buffer();
            Answers.appendAcquired(batch, 0x0A0A0A0A0A0A0A0AL, 1000, 0);
            Answers.appendWithLong(batch, AnswerType.RELEASED, 1000);
            return batch;
        })).isEqualTo("41 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 00 00 00 03 E8 00 00 00 00 0A 52 00 00 00 00 00 00 03 E8 0A");
        List<Golden> all = Arrays.stream(AnswerType.values()).map(AnswersTests::golden).toList();
        assertThat(sent(ch -> {
            ByteBuf batch = ch.alloc().buffer();
            all.forEach(g -> Answers.append(batch, g.answer()));
            return batch;
        })).isEqualTo(String.join(" ", all.stream().map(Golden::hex).toList()));
    }

    /** With assertions on (Surefire's default), a type of another layout is a bug caught at once. */
    @Test
    void theOneU64AppenderRefusesAnotherLayout() {
        assumeTrue(Answers.class.desiredAssertionStatus(), "assertions are off");
        ByteBuf b = Unpooled.buffer();
        try {
            assertThatThrownBy(() -> Answers.appendWithLong(b, AnswerType.ACQUIRED, 1))
                    .isInstanceOf(AssertionError.class).hasMessageContaining("ACQUIRED");
        } finally {
            b.release();
        }
    }

    /** Writes the buffer through a channel and returns what came out, as spaced upper-case hex. */
    static String sent(Function<EmbeddedChannel, ByteBuf> answer) {
        EmbeddedChannel ch = new EmbeddedChannel();
        assertThat(ch.writeOutbound(answer.apply(ch))).isTrue();
        ByteBuf out = ch.readOutbound();
        try {
            byte[] bytes = ByteBufUtil.getBytes(out);
            return HexFormat.ofDelimiter(" ").withUpperCase().formatHex(bytes);
        } finally {
            out.release();
            ch.finishAndReleaseAll();
        }
    }
}
