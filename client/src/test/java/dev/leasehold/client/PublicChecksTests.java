package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;

/** The checks the client makes public for adapters and configuration: keys and server addresses. */
class PublicChecksTests {

    @Test
    void checkKeyIsTheRuleOfEveryCall() {
        assertThat(LeaseholdClient.checkKey("café")).isEqualTo(5);
        assertThat(LeaseholdClient.checkKey("é".repeat(LeaseholdClient.MAX_KEY_BYTES / 2)))
                .isEqualTo(LeaseholdClient.MAX_KEY_BYTES);
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.checkKey("x".repeat(513)))
                .withMessage("key is 513 UTF-8 bytes, more than the limit of 512"
                        + " (a key is 1 to 512 bytes of UTF-8 without a newline)");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.checkKey("a\uDBFFb"))
                .withMessageContaining("unpaired surrogate");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.checkKey("a\nb"))
                .withMessageContaining("newline");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.checkKey(""))
                .withMessage("key is empty (a key is 1 to 512 bytes of UTF-8 without a newline)");
    }

    @Test
    void limitsAreTheProtocols() {
        assertThat(LeaseholdClient.MAX_KEY_BYTES).isEqualTo(512);
        assertThat(LeaseholdClient.MAX_LEASE_SECONDS).isEqualTo(255);
        assertThat(LeaseholdClient.MAX_WAIT_SECONDS).isEqualTo(255);
    }

    @Test
    void serverAddressesAndWhatIsWrongWithThem() {
        assertThat(LeaseholdClient.serverAddress("locks-0:7421")).isEqualTo(InetSocketAddress.createUnresolved("locks-0", 7421));
        assertThat(LeaseholdClient.serverAddress(" locks-0 ")).isEqualTo(InetSocketAddress.createUnresolved("locks-0", 7420));
        assertThat(LeaseholdClient.serverAddress("[::1]:7422")).isEqualTo(InetSocketAddress.createUnresolved("::1", 7422));
        assertThat(LeaseholdClient.serverAddress("::1")).isEqualTo(InetSocketAddress.createUnresolved("::1", 7420));
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.serverAddress("127.0.0.1:notaport"))
                .withMessageStartingWith("bad port in server address '127.0.0.1:notaport': 'notaport' is not a number; "
                        + "write host:port");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.serverAddress("h:99999"))
                .withMessageContaining("99999 is not 1 to 65535");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.serverAddress("h:0"))
                .withMessageContaining("0 is not 1 to 65535");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.serverAddress(":7420"))
                .withMessageContaining("has no host");
        assertThatIllegalArgumentException().isThrownBy(() -> LeaseholdClient.serverAddress(" "))
                .withMessageContaining("server address is empty");
    }
}
