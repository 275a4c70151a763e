package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;

import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.settings.SettingException;

/**
 * {@code leasehold.max-value-bytes} (PROTOCOL.md 17.5): 256 by default, from 0 (values off) to 1024;
 * any other value stops the start with the typed {@link SettingException} naming the property.
 */
class MaxValueBytesSettingTests {

    @Test
    void theDefaultIs256() {
        assertThat(RecoveryGraceTests.bind(Map.of()).maxValueBytes()).isEqualTo(256)
                .isEqualTo(LeaseholdServer.Settings.DEFAULT_MAX_VALUE_BYTES);
    }

    @Test
    void everyValueFrom0To1024IsTaken() {
        for (int ok : new int[] {0, 1, 256, 1023, 1024}) {
            assertThat(RecoveryGraceTests.bind(Map.of("leasehold.max-value-bytes", "" + ok)).maxValueBytes()).isEqualTo(ok);
        }
    }

    @Test
    void aValueOutsideTheRangeFailsNamingTheProperty() {
        for (String bad : new String[] {"-1", "1025", "65535"}) {
            Throwable t = catchThrowable(() -> RecoveryGraceTests.bind(Map.of("leasehold.max-value-bytes", bad)));
            assertThat(t).as(bad).isInstanceOf(BindException.class).hasRootCauseInstanceOf(SettingException.class);
            Throwable root = t;
            while (!(root instanceof SettingException)) {
                root = root.getCause();
            }
            assertThat(((SettingException) root).property()).as(bad).isEqualTo("leasehold.max-value-bytes");
            assertThat(root.getMessage()).as(bad).contains("0..1024");
        }
    }
}
