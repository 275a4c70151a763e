package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;

import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.settings.SettingException;

/**
 * {@code leasehold.max-wait} (PROTOCOL.md 14.4): 255 s by default, from 255 s (every {@code A} and
 * {@code S} wait fits) to 3600 s, to the millisecond; any other value stops the start with the
 * typed {@link SettingException} naming the property, as every other setting does.
 */
class MaxWaitSettingTests {

    @Test
    void theDefaultIs255SecondsTheLongestWaitOfAnAOrS() {
        assertThat(RecoveryGraceTests.bind(Map.of()).maxWait()).isEqualTo(Duration.ofSeconds(255))
                .isEqualTo(LeaseholdServer.Settings.DEFAULT_MAX_WAIT);
    }

    @Test
    void everyValueFrom255sTo3600sToTheMillisecondIsTaken() {
        for (String ok : new String[] {"255s", "255001ms", "300s", "60m", "3600s", "1h"}) {
            assertThat(RecoveryGraceTests.bind(Map.of("leasehold.max-wait", ok)).maxWait()).as(ok)
                    .isBetween(Duration.ofSeconds(255), Duration.ofSeconds(3600));
        }
    }

    @Test
    void aValueOutsideTheRangeFailsNamingTheProperty() {
        for (String bad : new String[] {"254s", "254999ms", "0s", "3601s", "2h", "-1s"}) {
            Throwable t = catchThrowable(() -> RecoveryGraceTests.bind(Map.of("leasehold.max-wait", bad)));
            assertThat(t).as(bad).isInstanceOf(BindException.class).hasRootCauseInstanceOf(SettingException.class);
            SettingException e = rootSetting(t);
            assertThat(e.property()).as(bad).isEqualTo("leasehold.max-wait");
            assertThat(e.getMessage()).as(bad).contains("255s..3600s");
        }
    }

    @Test
    void aValueFinerThanAMillisecondFails() {
        Throwable t = catchThrowable(() -> RecoveryGraceTests.bind(Map.of("leasehold.max-wait", "300000001ns")));
        assertThat(rootSetting(t).property()).isEqualTo("leasehold.max-wait");
    }

    private static SettingException rootSetting(Throwable t) {
        while (t != null && !(t instanceof SettingException)) {
            t = t.getCause();
        }
        assertThat(t).isInstanceOf(SettingException.class);
        return (SettingException) t;
    }
}
