package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.leasehold.settings.SettingException;

/** What the protocol port reports when it cannot start; its running is covered by the integration tests. */
class LeaseholdServerTests {

    @Test
    void aPortThatCannotBeBoundNamesTheSettingsAndHowToFindTheProcessThatHoldsIt() {
        SettingException e = LeaseholdServer.bindFailure("127.0.0.1", 7420,
                new RuntimeException("Failed to bind on [127.0.0.1:7420]"));
        assertThat(e.getMessage()).isEqualTo("Cannot bind the protocol port 127.0.0.1:7420 (leasehold.address, "
                + "leasehold.port): Failed to bind on [127.0.0.1:7420]");
        assertThat(e.property()).isEqualTo("leasehold.port");
        assertThat(e.value()).isEqualTo("7420");
        assertThat(e.action()).contains("ss -ltnp 'sport = :7420'").contains("set another leasehold.port");
    }
}
