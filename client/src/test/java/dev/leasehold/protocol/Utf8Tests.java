package dev.leasehold.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;

import org.junit.jupiter.api.Test;
import dev.leasehold.testing.support.Seeds;

class Utf8Tests {

    @Test
    void acceptsValidText() {
        for (String s : new String[] {"a", "orders/42", "café", "日本語", "😀", "\u0001ctl", "\uFFFD", "\u007F"}) {
            assertThat(Utf8.isValid(s.getBytes(StandardCharsets.UTF_8))).as(s).isTrue();
        }
    }

    @Test
    void refusesOverlongSurrogatesTruncationAndOutOfRange() {
        for (String hex : new String[] {"C0AF", "C1BF", "E080AF", "F08080AF", "EDA080", "EDBFBF", "F4908080",
                "F5808080", "FF", "80", "C3", "E282", "F09F98", "C328"}) {
            assertThat(Utf8.isValid(HexFormat.of().parseHex(hex))).as(hex).isFalse();
        }
    }

    @Test
    void agreesWithTheJdkStrictDecoderOnRandomBytes() {
        long seed = Seeds.seed("Utf8Tests");
        Random random = new Random(seed);
        for (int i = 0; i < 200_000; i++) {
            byte[] b = new byte[1 + random.nextInt(6)];
            random.nextBytes(b);
            assertThat(Utf8.isValid(b)).as("seed %d bytes %s", seed, HexFormat.of().formatHex(b))
                    .isEqualTo(jdkStrict(b));
        }
    }

    private static boolean jdkStrict(byte[] b) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }
}
