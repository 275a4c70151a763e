package dev.leasehold.client.internal;

import static dev.leasehold.client.internal.StubWire.GRACE;
import static dev.leasehold.client.internal.StubWire.SECOND;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.HoldMode;
import dev.leasehold.protocol.Request;

/**
 * An acquire on a revision 1.4 session, on the manual clock (PROTOCOL.md 9.13 and 9.14): the
 * millisecond wait sent as {@code M}, a wait above the session's maximum not sent, and the
 * Withdraw of a call whose caller stopped waiting, with each answer it may get.
 */
@Timeout(10)
class Revision14CallTests {

    private static final byte[] KEY = "orders/42".getBytes(StandardCharsets.UTF_8);
    private static final long MS = ManualTime.MS;

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;

    @AfterEach
    void close() {
        wire.close();
    }

    private AcquireCall acquire(long waitMillis, HoldMode mode) {
        return wire.engine().acquireMillis(KEY, waitMillis, 10, mode, g -> new AcquireOutcome.Acquired(null), false);
    }

    private static AcquireOutcome outcome(AcquireCall c) {
        assertThat(c.result()).isDone();
        return c.result().join();
    }

    @Test
    void aMillisecondWaitGoesOutAsAnMWithTheTimeLeft() {
        wire.speak14(255_000);
        AcquireCall c = acquire(200, HoldMode.EXCLUSIVE);
        assertThat(c.deadline() - time.nanoTime()).isEqualTo(200 * MS);
        time.advance(30 * MS + 1);
        assertThat(wire.write()).singleElement()
                .isEqualTo(Request.MilliAcquire.exclusive(170, 10, c.owner(), KEY));
        AcquireCall shared = acquire(1500, HoldMode.ofLimit(4));
        assertThat(wire.write()).singleElement()
                .isEqualTo(Request.MilliAcquire.shared(1500, 10, shared.owner(), 4, KEY));
    }

    @Test
    void onAOneThreeSessionTheSameWaitIsRoundedUpToWholeSeconds() {
        AcquireCall c = acquire(200, HoldMode.EXCLUSIVE); // the stub's dispatcher expects 1.3 now
        assertThat(c.deadline() - time.nanoTime()).isEqualTo(SECOND);
        assertThat(wire.write()).singleElement().isEqualTo(new Request.Acquire(1, 10, c.owner(), KEY));
    }

    @Test
    void aWaitAboveTheSessionsMaximumIsNotSentNorCutShort() {
        wire.speak14(255_000);
        AcquireCall c = acquire(300_000, HoldMode.EXCLUSIVE);
        assertThat(wire.write()).isEmpty();
        assertThat(outcome(c)).isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                u -> assertThat(u.reason()).contains("max-wait of 255000 ms"));
    }

    @Test
    void anInterruptedCallConcludesAtOnceAndWithdrawsOnTheSameSession() {
        wire.speak14(255_000);
        AcquireCall c = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.write();
        c.conclude("the calling thread was interrupted");
        assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(wire.write()).singleElement().isEqualTo(new Request.Withdraw(c.owner(), KEY));
        wire.answer(new Answer.TimedOut(c.owner()));
        time.advance(GRACE + MS);
        assertThat(wire.closedSessions()).as("the T came within the grace").isEmpty();
    }

    @Test
    void aGrantThatCameBeforeTheWithdrawIsReleased() {
        wire.speak14(255_000);
        AcquireCall c = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.write();
        c.conclude("the caller cancelled the acquire");
        wire.write(); // the W
        wire.answer(new Answer.Acquired(c.owner(), 1001, 850));
        assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        List<Request> sent = wire.write();
        assertThat(sent).singleElement().isEqualTo(new Request.Release(1001, KEY));
    }

    @Test
    void noAnswerWithinTheGraceOfTheWithdrawClosesTheSession() {
        wire.speak14(255_000);
        AcquireCall c = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.write();
        c.conclude("interrupted");
        wire.write();
        time.advance(GRACE - 1);
        assertThat(wire.closedSessions()).isEmpty();
        time.advance(1);
        assertThat(wire.closedSessions()).singleElement().asString().contains("withdrawn");
    }

    @Test
    void anAcquireStoppedWhileBeingWrittenIsWithdrawnBehindItsBytesAndARacedGrantReleased() {
        wire.speak14(255_000);
        AcquireCall c = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.beginWrite();
        c.conclude("interrupted");
        assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        // Not closed: a grant decided before the server saw a close would hold the key for its lease.
        assertThat(wire.closedSessions()).isEmpty();
        wire.finishWrite();
        assertThat(wire.write()).singleElement().isInstanceOf(Request.Withdraw.class);
        wire.answer(new Answer.Acquired(c.owner(), 1001, 0)); // the grant came before the W
        assertThat(wire.write()).singleElement().isEqualTo(new Request.Release(1001, KEY));
        assertThat(wire.closedSessions()).isEmpty();
    }

    @Test
    void aOneThreeSessionGetsNoWithdraw() {
        AcquireCall c = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.write();
        c.conclude("interrupted");
        assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(wire.write()).isEmpty();
    }

    @Test
    void aWithdrawThatWaitsForItsProofIsCancelledOnTAndOnARacedGrant() {
        wire.speak14(255_000);
        AcquireCall timedOut = acquire(20_000, HoldMode.EXCLUSIVE);
        AcquireCall granted = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.write();
        timedOut.withdraw("the campaign was closed");
        granted.withdraw("the campaign was closed");
        assertThat(timedOut.result()).isNotDone();
        assertThat(wire.write()).containsExactly(new Request.Withdraw(timedOut.owner(), KEY),
                new Request.Withdraw(granted.owner(), KEY));
        wire.answer(new Answer.TimedOut(timedOut.owner()));
        wire.answer(new Answer.Acquired(granted.owner(), 7, 12));
        assertThat(outcome(timedOut)).isInstanceOf(AcquireOutcome.Cancelled.class);
        assertThat(outcome(granted)).isInstanceOf(AcquireOutcome.Cancelled.class);
        assertThat(outcome(granted).isDefinitiveRefusal()).isTrue();
        assertThat(wire.write()).singleElement().isEqualTo(new Request.Release(7, KEY));
    }

    @Test
    void aWithdrawBeforeTheWriteIsUnavailableAndAWithdrawWithoutAnswerIsIndeterminate() {
        wire.speak14(255_000);
        AcquireCall queued = acquire(20_000, HoldMode.EXCLUSIVE);
        queued.withdraw("stopped");
        assertThat(outcome(queued)).isInstanceOf(AcquireOutcome.Unavailable.class);
        assertThat(wire.write()).isEmpty();

        AcquireCall silent = acquire(20_000, HoldMode.EXCLUSIVE);
        wire.write();
        silent.withdraw("stopped");
        wire.write();
        time.advance(GRACE);
        assertThat(outcome(silent)).isInstanceOf(AcquireOutcome.Indeterminate.class);
    }
}
