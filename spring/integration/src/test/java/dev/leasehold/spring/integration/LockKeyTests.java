package dev.leasehold.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.client.LeaseholdClient;

/**
 * Keys are checked by the client's own rule when a lock is obtained: a key the server would
 * refuse never becomes a lock object. No server: the client connects on its first request only.
 */
class LockKeyTests {

    private final LeaseholdClient client = LeaseholdClient.create("127.0.0.1:1");
    private final LeaseholdLockRegistry registry = new LeaseholdLockRegistry(client, "orders");

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void theServerKeyMayHaveExactlyTheClientsLimit() {
        String prefix = "si/orders/";
        String longest = "k".repeat(LeaseholdClient.MAX_KEY_BYTES - prefix.length());
        assertThat(registry.obtain(longest).getLockKey()).isEqualTo(longest);
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(longest + "k"))
                .withMessageContaining("gives server key 'si/orders/kkk")
                .withMessageContaining("513 UTF-8 bytes, more than the limit of 512");
    }

    @Test
    void aKeyThatIsNotValidUnicodeIsRefusedNotMangled() {
        // String.getBytes(UTF_8) would silently send '?' for the lone surrogate: another key.
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain("order-\uD800"))
                .withMessageContaining("lock key 'order-\uD800'")
                .withMessageContaining("unpaired surrogate");
    }

    @Test
    void emptyKeysAndNewlinesAreRefused() {
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(""))
                .withMessageContaining("the lock key is empty");
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain("a\nb"))
                .withMessageContaining("newline");
        assertThat(registry.cacheSize()).isZero();
    }
}
