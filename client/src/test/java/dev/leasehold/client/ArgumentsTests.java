package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.InetSocketAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Arguments are checked before anything is sent, with a message that says what is wrong. */
class ArgumentsTests {

    @Test
    void keysMustBe1To512Utf8BytesWithoutNewline() {
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.key(null)).withMessageContaining("null");
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.key("")).withMessageContaining("empty");
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.key("a\nb"))
                .withMessageContaining("newline");
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.key("x".repeat(513)))
                .withMessageContaining("513");
        // 256 two-byte characters are 512 bytes: fine; one more ASCII byte is too much
        assertThat(Arguments.key("é".repeat(256))).hasSize(512);
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.key("é".repeat(256) + "x"))
                .withMessageContaining("513");
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.key("bad\uD800surrogate"))
                .withMessageContaining("surrogate");
        assertThat(Arguments.key("café")).containsExactly(0x63, 0x61, 0x66, 0xC3, 0xA9);
        assertThat(Arguments.key("tab\there")).hasSize(8); // control characters other than 0x0A are allowed
    }

    @Test
    void waitMustBe0To255AndLease1To255() {
        assertThat(Arguments.waitSeconds(0)).isZero();
        assertThat(Arguments.waitSeconds(255)).isEqualTo(255);
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.waitSeconds(-1)).withMessageContaining("wait");
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.waitSeconds(256))
                .withMessageContaining("wait is 256");
        assertThat(Arguments.leaseSeconds(1)).isEqualTo(1);
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.leaseSeconds(0))
                .withMessageContaining("lease is 0");
        assertThatIllegalArgumentException().isThrownBy(() -> Arguments.leaseSeconds(256))
                .withMessageContaining("lease");
    }

    @Test
    void badArgumentsAreRejectedBeforeAnyConnection() throws Exception {
        // A name that cannot resolve (RFC 6761 .invalid): nothing may even try to reach it.
        try (LeaseholdClient client = LeaseholdClient.create(ClientOptions.defaults(),
                List.of(InetSocketAddress.createUnresolved("leasehold.invalid", 7420)))) {
            assertThatIllegalArgumentException().isThrownBy(() -> client.acquire("", 1, 1));
            assertThatIllegalArgumentException().isThrownBy(() -> client.acquire("k", 256, 1));
            assertThatIllegalArgumentException().isThrownBy(() -> client.acquire("k", 0, 0));
            assertThatIllegalArgumentException().isThrownBy(() -> client.acquireAsync("k\n", 1, 1));
            assertThatIllegalArgumentException().isThrownBy(() -> client.acquireAsync("k", -1, 1));
            // sessions start only when a request is submitted: none exists, so none can connect
            assertThat(client.engine().sessions()).isEmpty();
        }
    }

    @Test
    void serverAddressesAreParsed() {
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.create(new String[0]));
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.create("host:notaport"));
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.create("host:70000"));
        try (LeaseholdClient c = LeaseholdClient.create("localhost", "127.0.0.1:7421", "[::1]:7422")) {
            assertThat(c.engine().config().addresses()).extracting(a -> a.getHostString() + ":" + a.getPort())
                    .containsExactly("localhost:7420", "127.0.0.1:7421", "::1:7422");
        }
    }
}
