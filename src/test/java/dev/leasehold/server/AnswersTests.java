package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.protocol.ErrorCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * The server's answer encoder against exact bytes, as they leave a channel: the examples of
 * PROTOCOL.md section 3 and every answer layout. Nothing here decodes and re-encodes.
 */
class AnswersTests {

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
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.PONG, 0x0A))).isEqualTo("50 00 00 00 00 00 00 00 0A 0A");
        assertThat(sent(ch -> Answers.withLong(ch.alloc(), AnswerType.PONG, -1))).isEqualTo("50 FF FF FF FF FF FF FF FF 0A");
    }

    @Test
    void errorCarriesCodeAndMessageWithoutNewlines() {
        assertThat(sent(ch -> Answers.error(ch.alloc(), ErrorCode.UNKNOWN_OP, "unknown op 0x5A")))
                .isEqualTo("58 01 75 6E 6B 6E 6F 77 6E 20 6F 70 20 30 78 35 41 0A");
        String sent = sent(ch -> Answers.error(ch.alloc(), ErrorCode.INCOMPLETE_FRAME, "x".repeat(500)));
        assertThat(sent).startsWith("58 05 78");
        assertThat(sent.split(" ")).as("X message at most 200 bytes").hasSize(2 + 200 + 1);
        assertThat(sent(ch -> Answers.error(ch.alloc(), ErrorCode.BAD_KEY, "a\nb"))).doesNotContain("0A 62").endsWith("0A");
    }

    @Test
    void answersAppendedToABatchAreTheSameBytesBackToBack() {
        assertThat(sent(ch -> {
            ByteBuf batch = ch.alloc().buffer();
            Answers.appendAcquired(batch, 0x0A0A0A0A0A0A0A0AL, 1000, 0);
            Answers.appendWithLong(batch, AnswerType.RELEASED, 1000);
            return batch;
        })).isEqualTo("41 0A 0A 0A 0A 0A 0A 0A 0A 00 00 00 00 00 00 03 E8 00 00 00 00 0A 52 00 00 00 00 00 00 03 E8 0A");
    }

    /** Writes the buffer through a channel and returns what came out, as spaced upper-case hex. */
    private static String sent(java.util.function.Function<EmbeddedChannel, ByteBuf> answer) {
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
