package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.DurationStyle;

import dev.leasehold.store.RecoveryGrace;

/** leasehold.recovery-grace and leasehold.drain-timeout: parsing, binding, validation messages. */
class RecoveryGraceTests {

    @Test
    void parsesAutoDurationsAndOff() {
        assertThat(RecoveryGrace.valueOf("auto")).isEqualTo(RecoveryGrace.AUTO);
        assertThat(RecoveryGrace.valueOf("AUTO").isAuto()).isTrue();
        assertThat(RecoveryGrace.valueOf("255s").fixed()).isEqualTo(Duration.ofSeconds(255));
        assertThat(RecoveryGrace.valueOf("1500ms").fixed()).isEqualTo(Duration.ofMillis(1500));
        assertThat(RecoveryGrace.valueOf("PT30S").fixed()).isEqualTo(Duration.ofSeconds(30));
        assertThat(RecoveryGrace.valueOf("0s").isOff()).isTrue();
        assertThat(RecoveryGrace.valueOf("0s").resolve(Duration.ofSeconds(9))).isZero();
        assertThat(RecoveryGrace.AUTO.resolve(Duration.ofSeconds(9))).isEqualTo(Duration.ofSeconds(9));
        assertThat(RecoveryGrace.valueOf("30s")).hasToString("30s");
        assertThat(RecoveryGrace.AUTO).hasToString("auto");
    }

    /** The store package parses durations itself (no Spring there): as Spring Boot does. */
    @Test
    void readsDurationsAsSpringBootDoes() {
        for (String text : new String[] {"30s", "1500ms", "1500", "+5s", "4m", "10MS", "250000us", "PT30S", "pt2m", "0"}) {
            assertThat(RecoveryGrace.valueOf(text).fixed()).as(text).isEqualTo(DurationStyle.detectAndParse(text));
        }
        assertThatThrownBy(() -> RecoveryGrace.valueOf("3x")).hasMessageContaining("leasehold.recovery-grace");
        assertThatThrownBy(() -> RecoveryGrace.valueOf("Pnonsense")).hasMessageContaining("leasehold.recovery-grace");
    }

    @Test
    void rejectsValuesNamingTheProperty() {
        assertThatThrownBy(() -> RecoveryGrace.valueOf("256s")).hasMessageContaining("leasehold.recovery-grace")
                .hasMessageContaining("255");
        assertThatThrownBy(() -> RecoveryGrace.valueOf("-1s")).hasMessageContaining("leasehold.recovery-grace");
        assertThatThrownBy(() -> RecoveryGrace.valueOf("sometimes")).hasMessageContaining("leasehold.recovery-grace");
    }

    @Test
    void bindsFromTextWithDefaults() {
        LeaseholdProperties defaults = bind(Map.of());
        assertThat(defaults.recoveryGrace()).isEqualTo(RecoveryGrace.AUTO);
        assertThat(defaults.drainTimeout()).isEqualTo(Duration.ofSeconds(10));

        LeaseholdProperties set = bind(Map.of("leasehold.recovery-grace", "45s", "leasehold.drain-timeout", "2m"));
        assertThat(set.recoveryGrace().fixed()).isEqualTo(Duration.ofSeconds(45));
        assertThat(set.drainTimeout()).isEqualTo(Duration.ofMinutes(2));

        assertThatThrownBy(() -> bind(Map.of("leasehold.recovery-grace", "never"))).isInstanceOf(BindException.class)
                .hasMessageContaining("leasehold.recovery-grace");
        assertThatThrownBy(() -> bind(Map.of("leasehold.drain-timeout", "0s"))).isInstanceOf(BindException.class)
                .rootCause().hasMessageContaining("Invalid leasehold.drain-timeout = PT0S");
        assertThatThrownBy(() -> bind(Map.of("leasehold.drain-timeout", "11m"))).isInstanceOf(BindException.class)
                .rootCause().hasMessageContaining("leasehold.drain-timeout");
    }

    static LeaseholdProperties bind(Map<String, String> props) {
        return new Binder(new MapConfigurationPropertySource(props)).bindOrCreate("leasehold", LeaseholdProperties.class);
    }
}
