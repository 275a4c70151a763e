package dev.leasehold.client;

import static dev.leasehold.client.internal.StubWire.SECOND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.internal.ManualTime;
import dev.leasehold.client.internal.StubWire;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;

/**
 * {@link Ticket#proclaim} on a manual clock with a stub session (PROTOCOL.md 9.16.2 to 9.16.4): one
 * {@code V} in flight per ticket, in call order; retried after a broken session until the lease
 * would have ended; NotHeld without a request for a released ticket; refused before sending for a
 * shared ticket, a 1.3 server, a value over the session's limit.
 */
@Timeout(20)
class ProclaimTests {

    private static final String KEY = "lead";
    private static final byte[] KEY_BYTES = KEY.getBytes(StandardCharsets.UTF_8);

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;

    @AfterEach
    void close() {
        wire.close();
    }

    private Ticket ticket(long token, boolean shared) {
        long now = time.nanoTime();
        return new Ticket(wire.engine(), KEY, KEY_BYTES, token, now + 9 * SECOND, now + 10 * SECOND, shared);
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    private List<String> writtenHex() {
        return wire.write().stream().map(r -> HexFormat.of().formatHex(FrameWriter.encode(r))).toList();
    }

    @Test
    void proclaimsAreSentOneAfterAnotherInCallOrder() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Ticket t = ticket(1042, false);
        CompletableFuture<ProclaimOutcome> first = t.proclaimAsync("n1".getBytes(StandardCharsets.UTF_8));
        CompletableFuture<ProclaimOutcome> second = t.proclaimAsync("n2".getBytes(StandardCharsets.UTF_8));
        assertThat(writtenHex()).as("only the first is in flight")
                .containsExactly("5600000000000004120002" + "6e31" + "6c6561640a");
        assertThat(second).isNotDone();
        wire.answer(new Answer.ValueSet(1042));
        assertThat(get(first)).isEqualTo(new ProclaimOutcome.Proclaimed());
        assertThat(writtenHex()).containsExactly("5600000000000004120002" + "6e32" + "6c6561640a"); // 17.7
        wire.answer(new Answer.NotHeld(1042));
        assertThat(get(second)).isEqualTo(new ProclaimOutcome.NotHeld());
    }

    @Test
    void aBrokenSessionIsRetriedUntilTheLeaseWouldHaveEnded() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Ticket t = ticket(7, false);
        CompletableFuture<ProclaimOutcome> p = t.proclaimAsync(new byte[] {1, 2});
        assertThat(writtenHex()).hasSize(1);
        wire.breakSession("connection reset");
        time.advance(50 * ManualTime.MS); // the back-off after one attempt (TokenCall.backoff)
        assertThat(writtenHex()).as("sent again on the new session").hasSize(1);
        assertThat(p).isNotDone();
        time.advance(10 * SECOND);
        assertThat(get(p)).isInstanceOf(ProclaimOutcome.Indeterminate.class);
    }

    @Test
    void aReleasedTicketIsNotHeldWithoutARequest() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Ticket t = ticket(8, false);
        t.releaseAsync();
        wire.write(); // the Release
        assertThat(get(t.proclaimAsync(new byte[] {1}))).isEqualTo(new ProclaimOutcome.NotHeld());
        assertThat(writtenHex()).isEmpty();
    }

    @Test
    void whatCannotBeCarriedFailsBeforeSending() throws Exception {
        wire.speak14Everywhere(255_000, 4);
        assertThatThrownBy(() -> ticket(9, true).proclaimAsync(new byte[] {1}))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("shared grant");
        assertThatThrownBy(() -> ticket(9, false).proclaimAsync(new byte[1025]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1024");
        CompletableFuture<ProclaimOutcome> tooLong = ticket(9, false).proclaimAsync(new byte[5]);
        assertThat(writtenHex()).isEmpty();
        assertThatThrownBy(() -> get(tooLong)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(IllegalStateException.class).hasMessageContaining("leasehold.max-value-bytes");
        wire.speak13Everywhere();
        assertThatThrownBy(() -> ticket(10, false).proclaimAsync(new byte[] {1}))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("revision 1.3");
    }
}
