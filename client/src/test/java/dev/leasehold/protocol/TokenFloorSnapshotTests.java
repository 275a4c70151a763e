package dev.leasehold.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The token-floor snapshot file: round trip, and every way a damaged file is refused. */
class TokenFloorSnapshotTests {

    private final TokenFloorSnapshot snapshot = new TokenFloorSnapshot("cluster", "n1",
            Instant.parse("2026-12-07T16:03:10.123Z"), 3, 1234, 1_000_123, List.of("n1", "n2", "n3"));

    @Test
    void roundTripsThroughItsText() {
        String text = snapshot.encode();
        assertThat(text).startsWith(TokenFloorSnapshot.HEADER + "\n").contains("\ntoken-floor 1000123\n")
                .containsPattern("\nsha256 [0-9a-f]{64}\n$");
        assertThat(TokenFloorSnapshot.decode(text)).isEqualTo(snapshot);
        TokenFloorSnapshot single = new TokenFloorSnapshot("single", "single", Instant.EPOCH, 0, 0, 2_000_000,
                List.of());
        assertThat(TokenFloorSnapshot.decode(single.encode())).isEqualTo(single);
    }

    @Test
    void aChangedDigitIsCorrupt() {
        String text = snapshot.encode().replace("token-floor 1000123", "token-floor 1000124");
        assertThatThrownBy(() -> TokenFloorSnapshot.decode(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("corrupt");
    }

    @Test
    void everyTruncationIsRefused() {
        String text = snapshot.encode();
        for (int cut = 0; cut < text.length(); cut++) {
            String part = text.substring(0, cut);
            assertThatThrownBy(() -> TokenFloorSnapshot.decode(part)).as("cut at %d", cut)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void anotherFileOrVersionIsNamed() {
        assertThatThrownBy(() -> TokenFloorSnapshot.decode("hello\n")).hasMessageContaining("not a Leasehold");
        assertThatThrownBy(() -> TokenFloorSnapshot.decode(snapshot.encode().replace(
                "leasehold-token-floor-snapshot 1", "leasehold-token-floor-snapshot 2")))
                .hasMessageContaining("another format version");
    }
}
