package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** max-connections against the open-file limit: limit - open - max(256, limit/10). */
class ConnectionBudgetTests {

    @Test
    void defaultIsLoweredUnderALimitOfTwentyThousand() {
        ConnectionBudget b = ConnectionBudget.of(20_000, 20_000, 104);
        assertThat(b.reserve()).isEqualTo(2_000);
        assertThat(b.effective()).isEqualTo(17_896);
        assertThat(b.lowered()).isTrue();
        assertThat(b.describe()).contains("max-connections 17896", "leasehold.max-connections=20000 lowered",
                "open-file limit 20000", "104 open");
    }

    @Test
    void fitsUnchangedUnderALargeLimit() {
        ConnectionBudget b = ConnectionBudget.of(20_000, 1_048_576, 120);
        assertThat(b.effective()).isEqualTo(20_000);
        assertThat(b.lowered()).isFalse();
    }

    @Test
    void smallLimitKeepsTheFloorOfTheReserve() {
        ConnectionBudget b = ConnectionBudget.of(20_000, 1024, 100);
        assertThat(b.reserve()).isEqualTo(256);
        assertThat(b.effective()).isEqualTo(668);
    }

    @Test
    void limitWithNoRoomFailsNamingTheProperty() {
        assertThatThrownBy(() -> ConnectionBudget.of(20_000, 300, 100))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leasehold.max-connections").hasMessageContaining("ulimit -n");
    }

    @Test
    void thisProcessHasAReadableLimitOnLinux() {
        ConnectionBudget b = ConnectionBudget.forThisProcess(Integer.MAX_VALUE);
        assertThat(b.fileLimit()).isPositive();
        assertThat(b.effective()).isLessThan(Integer.MAX_VALUE).isPositive();
    }
}
