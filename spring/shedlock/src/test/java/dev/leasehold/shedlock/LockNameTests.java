package dev.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.client.LeaseholdClient;
import net.javacrumbs.shedlock.core.LockConfiguration;

/**
 * Lock names are checked by the client's own key rule before anything is sent. No server: a
 * refused name never reaches the client's connection, which opens on the first request only.
 */
class LockNameTests {

    private final LeaseholdClient client = LeaseholdClient.create("127.0.0.1:1");
    private final LeaseholdLockProvider provider = new LeaseholdLockProvider(client, "jobs/");

    @AfterEach
    void close() {
        provider.close();
        client.close();
    }

    @Test
    void aNameWhoseServerKeyPassesTheLimitIsRefused() {
        String name = "n".repeat(LeaseholdClient.MAX_KEY_BYTES - "jobs/".length() + 1);
        assertThatIllegalArgumentException().isThrownBy(() -> provider.lock(config(name)))
                .withMessageContaining("gives server key 'jobs/nnn")
                .withMessageContaining("513 UTF-8 bytes, more than the limit of 512");
    }

    @Test
    void aNameThatIsNotValidUnicodeIsRefusedNotMangled() {
        assertThatIllegalArgumentException().isThrownBy(() -> provider.lock(config("nightly-\uDC00")))
                .withMessageContaining("unpaired surrogate");
        assertThatIllegalArgumentException().isThrownBy(() -> provider.lock(config("a\nb")))
                .withMessageContaining("newline");
    }

    private static LockConfiguration config(String name) {
        return new LockConfiguration(Instant.now(), name, Duration.ofSeconds(10), Duration.ZERO);
    }
}
