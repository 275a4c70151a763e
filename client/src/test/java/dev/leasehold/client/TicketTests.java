package dev.leasehold.client;

import static dev.leasehold.client.internal.ManualTime.MS;
import static dev.leasehold.client.internal.StubWire.GRACE;
import static dev.leasehold.client.internal.StubWire.SECOND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.internal.ManualTime;
import dev.leasehold.client.internal.StubWire;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;

/**
 * A {@link Ticket} on a manual clock with a stub session: validity, and the Release and Extend
 * bounds of PROTOCOL.md 9.10 at their exact instants. The futures complete on the client's
 * delivery threads, so the tests wait for them (bounded), never for time to pass.
 */
@Timeout(20)
class TicketTests {

    private static final String KEY = "orders/42";
    private static final byte[] KEY_BYTES = KEY.getBytes(StandardCharsets.UTF_8);

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;

    @AfterEach
    void close() {
        wire.close();
    }

    private Ticket ticket(long token, long validIn, long leaseEndIn) {
        long now = time.nanoTime();
        return new Ticket(wire.engine(), KEY, KEY_BYTES, token, now + validIn, now + leaseEndIn);
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void isValidUntilOneTickBeforeValidUntil() {
        Ticket t = ticket(1, 5 * SECOND, 6 * SECOND);
        time.advance(5 * SECOND - 1);
        assertThat(t.isValid()).isTrue();
        assertThat(t.remaining()).isEqualTo(Duration.ofNanos(1));
        time.advance(1);
        assertThat(t.isValid()).isFalse();
        assertThat(t.remaining()).isZero();
    }

    @Test
    void aReleaseStopsValidityAtOnceAndIsIdempotent() throws Exception {
        Ticket t = ticket(2, 5 * SECOND, 6 * SECOND);
        CompletableFuture<ReleaseOutcome> r = t.releaseAsync();
        assertThat(t.isValid()).isFalse();
        assertThat(t.releaseAsync()).isSameAs(r);
        assertThat(wire.write()).containsExactly(new Request.Release(2, KEY_BYTES));
        wire.answer(new Answer.Released(2));
        assertThat(get(r)).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(get(t.extendAsync(10))).isInstanceOf(ExtendOutcome.NotHeld.class);
    }

    @Test
    void aReleaseIsSentOnlyBeforeTheLeaseCertainlyEnded() throws Exception {
        Ticket before = ticket(3, 5 * SECOND, 6 * SECOND);
        Ticket at = ticket(4, 5 * SECOND, 6 * SECOND);
        time.advance(6 * SECOND - 1);
        CompletableFuture<ReleaseOutcome> sent = before.releaseAsync();
        assertThat(wire.write()).containsExactly(new Request.Release(3, KEY_BYTES));
        wire.answer(new Answer.NotHeld(3));
        assertThat(get(sent)).isEqualTo(ReleaseOutcome.NOT_HELD);
        time.advance(1);
        assertThat(get(at.releaseAsync())).isEqualTo(ReleaseOutcome.EXPIRED);
        assertThat(wire.write()).as("nothing is sent at the bound").isEmpty();
    }

    @Test
    void aReleaseIsRetriedUntilTheLeaseCertainlyEndedThenExpired() throws Exception {
        Ticket t = ticket(5, 5 * SECOND, 6 * SECOND);
        CompletableFuture<ReleaseOutcome> r = t.releaseAsync();
        int attempts = 0;
        while (time.nanoTime() - (t.validUntilNanos() + SECOND) < 0 && !r.isDone()) {
            attempts += wire.write().size();
            wire.breakSession("reset");
            time.advance(200 * MS);
        }
        assertThat(attempts).isGreaterThan(5);
        assertThat(get(r)).isEqualTo(ReleaseOutcome.EXPIRED);
        assertThat(time.pending()).isZero();
    }

    @Test
    void anExtendIsSentOnlyBeforeTheLeaseCertainlyEnded() throws Exception {
        Ticket t = ticket(6, 5 * SECOND, 6 * SECOND);
        time.advance(6 * SECOND);
        assertThat(get(t.extendAsync(30))).isInstanceOf(ExtendOutcome.Expired.class);
        assertThat(wire.write()).isEmpty();
    }

    @Test
    void anExtendMovesValidityForwardNeverBack() throws Exception {
        Ticket t = ticket(7, 50 * SECOND, 51 * SECOND);
        long sendStart = time.nanoTime();
        CompletableFuture<ExtendOutcome> shorter = t.extendAsync(10);
        wire.write();
        wire.answer(new Answer.Extended(7));
        assertThat(get(shorter)).isEqualTo(new ExtendOutcome.Extended(sendStart + 50 * SECOND));
        assertThat(t.validUntilNanos()).as("a shorter extension does not shorten validity")
                .isEqualTo(sendStart + 50 * SECOND);
        CompletableFuture<ExtendOutcome> longer = t.extendAsync(100);
        wire.write();
        wire.answer(new Answer.Extended(7));
        // sendStart + 100 s - 1 % of 100 s
        assertThat(get(longer)).isEqualTo(new ExtendOutcome.Extended(sendStart + 99 * SECOND));
        assertThat(t.validUntilNanos()).isEqualTo(sendStart + 99 * SECOND);
    }

    @Test
    void aLostExtendStretchesTheReleaseBound() throws Exception {
        Ticket t = ticket(8, 5 * SECOND, 6 * SECOND);
        long start = time.nanoTime();
        CompletableFuture<ExtendOutcome> e = t.extendAsync(30);
        wire.write();
        wire.breakSession("reset"); // the Extend may have been applied
        time.advance(50 * MS);
        wire.write();
        wire.answer(new Answer.NotHeld(8));
        assertThat(get(e)).isInstanceOf(ExtendOutcome.NotHeld.class);
        // a release now is retried until the possible extension has ended too, not just the original lease
        time.advance(6 * SECOND);
        CompletableFuture<ReleaseOutcome> r = t.releaseAsync();
        assertThat(wire.write()).containsExactly(new Request.Release(8, KEY_BYTES));
        wire.answer(new Answer.NotHeld(8));
        assertThat(get(r)).isEqualTo(ReleaseOutcome.NOT_HELD);
        assertThat(start + GRACE + 30 * SECOND).isGreaterThan(time.nanoTime());
    }

    @Test
    void aBlockingReleaseInterruptedThrowsAndKeepsTheInterruptStatus() throws Exception {
        Ticket t = ticket(9, 5 * SECOND, 6 * SECOND);
        Thread.currentThread().interrupt();
        assertThatThrownBy(t::release).isInstanceOf(IllegalStateException.class).hasMessageContaining("interrupted");
        assertThat(Thread.interrupted()).as("status kept (and cleared here)").isTrue();
        // the release went on in the background
        assertThat(wire.write()).containsExactly(new Request.Release(9, KEY_BYTES));
        wire.answer(new Answer.Released(9));
        assertThat(get(t.releaseAsync())).isEqualTo(ReleaseOutcome.RELEASED);
    }
}
