package dev.leasehold.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.protocol.HoldMode;
import dev.leasehold.protocol.Request;

/**
 * An exclusive acquire carrying a value (PROTOCOL.md 9.16.1), on the manual clock: sent in its
 * {@code M}; not sent (Unavailable, naming why) where the session cannot carry it, a 1.3 session
 * or one whose {@code max_value_bytes} is shorter; never on a shared acquire.
 */
@Timeout(10)
class ValueAcquireTests {

    private static final byte[] KEY = "lead".getBytes(StandardCharsets.UTF_8);
    private static final byte[] VALUE = "10.0.0.7:8080".getBytes(StandardCharsets.UTF_8);

    private final StubWire wire = new StubWire();

    @AfterEach
    void close() {
        wire.close();
    }

    private AcquireCall acquire(byte[] value) {
        return wire.engine().acquireMillis(KEY, 0, 10, HoldMode.EXCLUSIVE, value,
                g -> new AcquireOutcome.Acquired(null), false);
    }

    @Test
    void theValueGoesOutInTheM() {
        wire.speak14Everywhere(255_000, 256);
        AcquireCall c = acquire(VALUE);
        assertThat(wire.write()).singleElement().isEqualTo(new Request.MilliAcquire(0, 0, 10, c.owner(), 0, VALUE, KEY));
    }

    @Test
    void aValueTheSessionCannotCarryIsNotSent() {
        wire.speak14Everywhere(255_000, 8);
        AcquireCall tooLong = acquire(VALUE);
        assertThat(wire.write()).isEmpty();
        assertThat(tooLong.result().join()).isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                u -> assertThat(u.reason()).contains("max-value-bytes of 8"));
        wire.speak13Everywhere();
        AcquireCall on13 = acquire(VALUE);
        assertThat(wire.write()).isEmpty();
        assertThat(on13.result().join()).isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                u -> assertThat(u.reason()).contains("revision 1.3"));
        AcquireCall without = acquire(new byte[0]);
        assertThat(wire.write()).as("without a value the same call goes out as an A")
                .singleElement().isEqualTo(new Request.Acquire(0, 10, without.owner(), KEY));
    }

    @Test
    void aSharedAcquireCarriesNoValue() {
        wire.speak14Everywhere(255_000, 256);
        assertThatThrownBy(() -> wire.engine().acquireMillis(KEY, 0, 10, HoldMode.ofLimit(0), VALUE,
                g -> new AcquireOutcome.Acquired(null), false)).isInstanceOf(IllegalArgumentException.class);
        assertThat(wire.submitted()).isZero();
    }
}
