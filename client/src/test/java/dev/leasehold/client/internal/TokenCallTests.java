package dev.leasehold.client.internal;

import static dev.leasehold.client.internal.ManualTime.MS;
import static dev.leasehold.client.internal.StubWire.GRACE;
import static dev.leasehold.client.internal.StubWire.SECOND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;

/**
 * Release and Extend on a manual clock with a stub session (PROTOCOL.md 9.10): the give-up
 * bound, the overdue answer, the back-off, each at its exact instant; and no timer left behind.
 */
@Timeout(10) // on a manual clock nothing waits: a hang is a bug
class TokenCallTests {

    private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;

    @AfterEach
    void close() {
        wire.close();
    }

    @Test
    void releaseEndsWithTheServersWord() {
        TokenCall<ReleaseOutcome> r = wire.engine().release(KEY, 7, time.nanoTime() + 10 * SECOND);
        assertThat(wire.write()).containsExactly(new Request.Release(7, KEY));
        wire.answer(new Answer.Released(7));
        assertThat(r.result().join()).isEqualTo(ReleaseOutcome.RELEASED);
        TokenCall<ReleaseOutcome> n = wire.engine().release(KEY, 8, time.nanoTime() + 10 * SECOND);
        wire.write();
        wire.answer(new Answer.NotHeld(8));
        assertThat(n.result().join()).isEqualTo(ReleaseOutcome.NOT_HELD);
    }

    @Test
    void anAnsweredCallLeavesNoTimerBehind() {
        // the review's defect: one overdue task per Release stayed queued for the whole grace
        for (int i = 0; i < 100; i++) {
            wire.engine().release(KEY, i, time.nanoTime() + 10 * SECOND);
        }
        wire.write();
        assertThat(time.pending()).as("give-up and overdue timer per call").isEqualTo(200);
        for (int i = 0; i < 100; i++) {
            wire.answer(new Answer.Released(i));
        }
        assertThat(time.pending()).isZero();
    }

    @Test
    void givesUpExactlyAtItsBound() {
        long giveUpAt = time.nanoTime() + 3 * SECOND;
        TokenCall<ReleaseOutcome> r = wire.engine().release(KEY, 7, giveUpAt);
        time.advance(3 * SECOND - 1);
        assertThat(r.result()).isNotDone();
        time.advance(1);
        assertThat(r.result().join()).isEqualTo(ReleaseOutcome.EXPIRED);
        assertThat(wire.write()).as("not sent at the bound").isEmpty();
        assertThat(time.pending()).isZero();
    }

    @Test
    void aWriteAtTheBoundIsNotSent() {
        long giveUpAt = time.nanoTime() + SECOND;
        TokenCall<ExtendOutcome> e = wire.engine().extend(KEY, 7, 10, giveUpAt);
        TokenCall<ExtendOutcome> f = wire.engine().extend(KEY, 8, 10, giveUpAt);
        assertThat(e.beginWrite(wire.new StubLink(), giveUpAt - 1)).isNotSameAs(Outbound.SKIP);
        assertThat(f.beginWrite(wire.new StubLink(), giveUpAt)).isSameAs(Outbound.SKIP);
        assertThat(f.result().join()).isInstanceOf(ExtendOutcome.Expired.class);
    }

    @Test
    void anOverdueAnswerGivesTheSessionUpAndTheCallIsRetriedAfterItsBackOff() {
        TokenCall<ReleaseOutcome> r = wire.engine().release(KEY, 7, time.nanoTime() + 60 * SECOND);
        wire.write();
        time.advance(GRACE - 1);
        assertThat(wire.sessionClosedByRequest()).isFalse();
        time.advance(1);
        assertThat(wire.sessionClosedByRequest()).as("closed at write + grace").isTrue();
        // first retry after 25 ms << 1 attempt = 50 ms
        assertThat(TokenCall.backoff(1)).isEqualTo(50 * MS);
        time.advance(50 * MS - 1);
        assertThat(wire.submitted()).isZero();
        time.advance(1);
        assertThat(wire.submitted()).isEqualTo(1);
        assertThat(wire.write()).containsExactly(new Request.Release(7, KEY));
        wire.answer(new Answer.NotHeld(7)); // the first attempt had released it
        assertThat(r.result().join()).isEqualTo(ReleaseOutcome.NOT_HELD);
        assertThat(time.pending()).isZero();
    }

    @Test
    void anOverdueCheckArmedLateNeverCancelsTheRetryOfABrokenSession() {
        // the writer arms the overdue check while the reader, seeing the session break, arms
        // the retry: whichever installs last, the retry must survive (found by a verify run)
        TokenCall<ExtendOutcome> e = wire.engine().extend(KEY, 7, 20, time.nanoTime() + 60 * SECOND);
        time.duringNextSchedule(() -> wire.breakSession("reset"));
        wire.write();
        time.advance(TokenCall.backoff(1));
        assertThat(wire.submitted()).as("retried").isEqualTo(1);
        wire.write();
        wire.answer(new Answer.Extended(7));
        assertThat(e.result().join()).isInstanceOf(ExtendOutcome.Extended.class);
        assertThat(time.pending()).isZero();
    }

    @Test
    void backOffDoublesUpToOneSecond() {
        assertThat(TokenCall.backoff(0)).isEqualTo(25 * MS);
        assertThat(TokenCall.backoff(2)).isEqualTo(100 * MS);
        assertThat(TokenCall.backoff(5)).isEqualTo(800 * MS);
        assertThat(TokenCall.backoff(6)).isEqualTo(SECOND);
        assertThat(TokenCall.backoff(60)).isEqualTo(SECOND);
    }

    @Test
    void anExtendIsValidFromItsSendStart() {
        long sendStart = time.nanoTime();
        TokenCall<ExtendOutcome> e = wire.engine().extend(KEY, 7, 20, sendStart + 60 * SECOND);
        wire.write();
        time.advance(300 * MS);
        wire.answer(new Answer.Extended(7));
        // 9.10: as 9.6 with queued_ms = 0: sendStart + lease - max(50 ms, 1 % of 20 s)
        assertThat(e.result().join()).isEqualTo(new ExtendOutcome.Extended(sendStart + 20 * SECOND - 200 * MS));
        assertThat(e.confirmedLeaseEnd()).isEqualTo(sendStart + 300 * MS + 20 * SECOND + 200 * MS);
        assertThat(e.uncertainLeaseEnd()).isNull();
    }

    @Test
    void aLostExtendLeavesAnUncertainLeaseEnd() {
        long start = time.nanoTime();
        TokenCall<ExtendOutcome> e = wire.engine().extend(KEY, 7, 20, start + 60 * SECOND);
        wire.write();
        time.advance(SECOND);
        wire.breakSession("reset");
        // it may have been applied when the server read it, up to a grace later
        assertThat(e.uncertainLeaseEnd()).isEqualTo(start + SECOND + GRACE + 20 * SECOND + 200 * MS);
        time.advance(TokenCall.backoff(1));
        wire.write();
        wire.answer(new Answer.NotHeld(7));
        assertThat(e.result().join()).isInstanceOf(ExtendOutcome.NotHeld.class);
    }

    @Test
    void closingTheClientFailsACallThatWaitsForItsRetry() {
        TokenCall<ReleaseOutcome> r = wire.engine().release(KEY, 7, time.nanoTime() + 60 * SECOND);
        wire.write();
        wire.breakSession("reset");
        wire.close();
        time.advance(SECOND);
        assertThatThrownBy(() -> r.result().join()).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(IllegalStateException.class);
    }
}
