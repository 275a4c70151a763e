package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class ClientOptionsTests {

    @Test
    void defaultsAreTheDocumentedOnes() {
        ClientOptions o = ClientOptions.defaults();
        assertThat(o.poolSize()).isEqualTo(2);
        assertThat(o.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.transportDeadline()).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.responseGrace()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.marginFloor()).isEqualTo(Duration.ofMillis(50));
        assertThat(o.driftRate()).isEqualTo(0.01);
        assertThat(o.threadNamePrefix()).isNull();
        assertThat(o.tls()).as("plaintext by default").isNull();
        assertThat(o.protocolRevision()).as("ask each server with a Hello (PROTOCOL.md 9.13)").isEqualTo("auto");
    }

    @Test
    void builderMakesImmutableCopies() {
        ClientOptions.Builder b = ClientOptions.builder().poolSize(3).responseGrace(Duration.ofMillis(500));
        ClientOptions first = b.build();
        b.poolSize(5);
        assertThat(first.poolSize()).isEqualTo(3);
        assertThat(b.build().poolSize()).isEqualTo(5);
        ClientOptions copy = first.toBuilder().driftRate(0.02).build();
        assertThat(copy.poolSize()).isEqualTo(3);
        assertThat(copy.responseGrace()).isEqualTo(Duration.ofMillis(500));
        assertThat(copy.driftRate()).isEqualTo(0.02);
        assertThat(first.driftRate()).isEqualTo(0.01);
        ClientTls tls = ClientTls.builder().build(); // the JDK's default trust, hostname verification on
        assertThat(tls.hostnameVerification()).isTrue();
        assertThat(first.toBuilder().tls(tls).build().toBuilder().build().tls()).isSameAs(tls);
    }

    @Test
    void badValuesAreRejectedByName() {
        assertThatIllegalArgumentException().isThrownBy(() -> ClientOptions.builder().poolSize(0).build())
                .withMessageContaining("poolSize");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClientOptions.builder().connectTimeout(Duration.ZERO).build())
                .withMessageContaining("connectTimeout");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClientOptions.builder().transportDeadline(Duration.ofSeconds(256)).build())
                .withMessageContaining("transportDeadline");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClientOptions.builder().responseGrace(Duration.ofMillis(-1)).build())
                .withMessageContaining("responseGrace");
        assertThatIllegalArgumentException().isThrownBy(() -> ClientOptions.builder().marginFloor(null).build())
                .withMessageContaining("marginFloor");
        assertThatIllegalArgumentException().isThrownBy(() -> ClientOptions.builder().driftRate(-0.1).build())
                .withMessageContaining("driftRate");
        assertThatIllegalArgumentException().isThrownBy(() -> ClientOptions.builder().threadNamePrefix(" ").build())
                .withMessageContaining("threadNamePrefix");
        assertThatIllegalArgumentException().isThrownBy(() -> ClientOptions.builder().protocolRevision("1.5").build())
                .withMessageContaining("protocolRevision").withMessageContaining("auto, 1.3 or 1.4");
        assertThat(ClientOptions.builder().protocolRevision("1.3").build().toBuilder().build().protocolRevision())
                .isEqualTo("1.3");
    }

    @Test
    void zeroGraceAndZeroDriftAreAllowed() {
        ClientOptions o = ClientOptions.builder().responseGrace(Duration.ZERO).driftRate(0).marginFloor(Duration.ZERO)
                .build();
        assertThat(o.responseGrace()).isZero();
    }
}
