package dev.leasehold.registry;

import static dev.leasehold.registry.RegistryHarness.key;
import static dev.leasehold.registry.RegistryHarness.token;
import static dev.leasehold.registry.RegistryHarness.waiter;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Revision 1.4 in the registry, on a manual clock: waits to the millisecond (an {@code M},
 * PROTOCOL.md 14.3) through the one acquire path, and Withdraw (section 15): a queued acquire of
 * this session and owner leaves the queue with {@code T} at once, the queue moves up, a grant
 * decided first is untouched, another session's waiter is never touched, and a recovery grace
 * changes none of it.
 */
class WithdrawAndMillisecondWaitTests {

    static final int READ = 0;
    static final long TICK_MILLIS = TimeUnit.NANOSECONDS.toMillis(LockRegistry.TICK_NANOS);

    final RegistryHarness h = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 0, 8, 1000));
    final SessionHandle s1 = new SessionHandle();
    final SessionHandle s2 = new SessionHandle();

    // ---------------------------------------------------------------- millisecond waits (14.3)

    @Test
    void aWaitOf200MillisecondsEndsNoEarlierThan200MsAndWithinTheTimersResolution() {
        token(h.acquire("k", 0, 30, 1, s1));
        Waiter w = waiter(h.acquireMillis("k", 200, 30, 2, s2));
        h.tick(199);
        assertThat(h.takeAnswers()).as("no T before 200 ms").isEmpty();
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        h.tick(1 + TICK_MILLIS); // 6.4 for M: within 20 ms; the wheel's resolution is one tick
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
        assertThat(h.registry.waiters()).isZero();
    }

    @Test
    void aOneMillisecondWaitQueuesAndAZeroWaitNeverDoes() {
        long held = token(h.acquire("k", 0, 30, 1, s1));
        assertThat(h.acquireMillis("k", 0, 30, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
        Waiter w = waiter(h.acquireMillis("k", 1, 30, 3, s2));
        h.release("k", held);
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
    }

    @Test
    void aMillisecondWaiterKeepsItsPlaceInTheOneFifoQueueWithSecondWaiters() {
        long held = token(h.acquire("k", 0, 30, 1, s1));
        Waiter seconds = waiter(h.acquire("k", 10, 30, 2, s1));
        Waiter millis = waiter(h.acquireMillis("k", 9_500, 30, 3, s2));
        h.release("k", held);
        assertThat(h.takeAnswers()).containsExactly(seconds);
        assertThat(millis.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        h.tick(9_500 + TICK_MILLIS);
        assertThat(h.takeAnswers()).containsExactly(millis);
        assertThat(millis.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
    }

    /** {@code max-wait} is up to 3600 s: a wait that long is timed exactly like a short one. */
    @Test
    void anHourLongWaitEndsAfterAnHour() {
        long held = token(h.acquire("k", 0, 255, 1, s1));
        Waiter w = waiter(h.acquireMillis("k", 3_600_000, 30, 2, s2));
        for (int i = 0; i < 17; i++) {
            h.tick(200_000); // the holder extends before its lease ends, so the key stays held
            assertThat(h.extend("k", held, 255)).isEqualTo(ExtendResult.EXTENDED);
        }
        h.tick(3_600_000 - 17 * 200_000 - 1);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        h.tick(1 + TICK_MILLIS);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
    }

    // ---------------------------------------------------------------- withdraw (15.2)

    @Test
    void aWithdrawnWaiterGetsTAtOnceAndTheNextWaiterIsGrantedAfterTheRelease() {
        long held = token(h.acquire("k", 0, 30, 1, s1));
        Waiter withdrawn = waiter(h.acquireMillis("k", 200_000, 30, 2, s1));
        Waiter next = waiter(h.acquireMillis("k", 200_000, 30, 3, s2));
        assertThat(s1.waitingCount()).isEqualTo(1);

        assertThat(h.withdraw("k", 2, s1)).isEqualTo(1);
        assertThat(h.takeAnswers()).as("T at once, no time passed").containsExactly(withdrawn);
        assertThat(withdrawn.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
        assertThat(h.withdrawals).hasValue(1);
        assertThat(h.registry.waiters()).as("it left every count").isEqualTo(1);
        assertThat(s1.waitingCount()).isZero();
        assertThat(next.outcome()).isEqualTo(Waiter.Outcome.WAITING);

        h.release("k", held);
        assertThat(h.takeAnswers()).containsExactly(next);
        assertThat(next.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(h.registry.check(key("k"), next.token())).isTrue();
    }

    /**
     * 15.2 rule 2: an exclusive waiter at the head of a key held shared holds the readers behind it
     * back; withdrawing it lets them in at once, in the same decision.
     */
    @Test
    void withdrawingAWriterAtTheHeadLetsTheReadersBehindItIn() {
        token(h.acquireShared("k", 0, 30, 1, READ, s1));
        Waiter writer = waiter(h.acquireMillis("k", 60_000, 30, 2, s1));
        Waiter r1 = waiter(h.acquireShared("k", 60, 30, 3, READ, s2));
        Waiter r2 = waiter(h.acquireShared("k", 60, 30, 4, READ, s2));

        assertThat(h.withdraw("k", 2, s1)).isEqualTo(1);
        assertThat(h.takeAnswers()).containsExactly(writer, r1, r2);
        assertThat(writer.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
        assertThat(r1.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(r2.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(r2.token()).isGreaterThan(r1.token());
        assertThat(h.registry.sharedHeld()).isEqualTo(3);
    }

    /** 15.2 rule 3: a grant decided first wins; the withdrawal finds nothing and answers nothing. */
    @Test
    void aWithdrawAfterTheGrantLeavesTheGrantAlone() {
        long held = token(h.acquire("k", 0, 30, 1, s1));
        Waiter w = waiter(h.acquireMillis("k", 10_000, 30, 2, s2));
        h.release("k", held);
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);

        assertThat(h.withdraw("k", 2, s2)).isZero();
        assertThat(h.takeAnswers()).as("no T after the A").isEmpty();
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(h.registry.check(key("k"), w.token())).as("the grant stands").isTrue();
        assertThat(h.withdrawals).hasValue(0);
    }

    /** 15.2 rule 4: no session can withdraw another's waiter, even with the same owner. */
    @Test
    void aWithdrawOfAnotherSessionsWaiterOrOfNothingChangesNothing() {
        long held = token(h.acquire("k", 0, 30, 1, s1));
        Waiter w = waiter(h.acquireMillis("k", 10_000, 30, 2, s1));

        assertThat(h.withdraw("k", 2, s2)).as("another session").isZero();
        assertThat(h.withdraw("k", 3, s1)).as("another owner").isZero();
        assertThat(h.withdraw("other", 2, s1)).as("another key, unknown to the registry").isZero();
        assertThat(h.withdraw("k", 1, s1)).as("the holder's owner: answered already").isZero();
        assertThat(h.takeAnswers()).isEmpty();
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        assertThat(h.registry.waiters()).isEqualTo(1);

        h.release("k", held);
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
    }

    /** Owners are not unique: every queued acquire of the session with that owner on that key goes. */
    @Test
    void everyMatchingWaiterOfTheSessionIsWithdrawnInQueueOrder() {
        token(h.acquire("k", 0, 30, 1, s1));
        Waiter a = waiter(h.acquire("k", 10, 30, 7, s1));
        Waiter other = waiter(h.acquire("k", 10, 30, 7, s2));
        Waiter b = waiter(h.acquireMillis("k", 10_000, 30, 7, s1));
        assertThat(h.withdraw("k", 7, s1)).isEqualTo(2);
        assertThat(h.takeAnswers()).containsExactly(a, b);
        assertThat(other.outcome()).isEqualTo(Waiter.Outcome.WAITING);
    }

    /** Section 15.3: a recovery grace holds every key, and a withdrawal works there as anywhere. */
    @Test
    void aWithdrawDuringARecoveryGraceAnswersTAtOnceAndTheNextWaiterIsGrantedWhenTheGraceEnds() {
        h.registry.holdAllUntil(h.clock.nanoTime() + TimeUnit.SECONDS.toNanos(3));
        Waiter first = waiter(h.acquireMillis("k", 10_000, 30, 1, s1));
        Waiter second = waiter(h.acquireMillis("k", 10_000, 30, 2, s2));

        assertThat(h.withdraw("k", 1, s1)).isEqualTo(1);
        assertThat(h.takeAnswers()).containsExactly(first);
        assertThat(first.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
        assertThat(second.outcome()).as("the grace still holds the key").isEqualTo(Waiter.Outcome.WAITING);

        h.tick(3_000 + TICK_MILLIS);
        assertThat(h.takeAnswers()).containsExactly(second);
        assertThat(second.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
    }

    /**
     * Waiters are not replicated, so a Withdraw costs no log write (PROTOCOL.md 15.6): the
     * cluster's {@link DecisionLog} hears nothing of it, while the grant it lets in is logged as
     * any grant.
     */
    @Test
    void aWithdrawLogsNothing() {
        java.util.List<String> logged = new java.util.ArrayList<>();
        DecisionLog log = new DecisionLog() {
            @Override
            public void granted(byte[] key, long token, int leaseSeconds, dev.leasehold.protocol.HoldMode mode,
                    byte[] value) {
                logged.add("granted " + token);
            }

            @Override
            public void valueSet(byte[] key, long token, byte[] value) {
                logged.add("value " + token);
            }

            @Override
            public void released(byte[] key, long token) {
                logged.add("released " + token);
            }

            @Override
            public void extended(byte[] key, long token, int leaseSeconds) {
                logged.add("extended " + token);
            }

            @Override
            public void expired(byte[] key, long token, int delaySeconds) {
                logged.add("expired " + token);
            }

            @Override
            public void delayEnded(byte[] key, long token) {
                logged.add("delayEnded " + token);
            }

            @Override
            public void checked(byte[] key, long token) {
                logged.add("checked " + token);
            }
        };
        java.util.concurrent.atomic.AtomicLong tokens = new java.util.concurrent.atomic.AtomicLong();
        LockRegistry r = new LockRegistry(RegistryHarness.roomy(), h.clock, tokens::incrementAndGet,
                LeaseHorizon.UNBOUNDED, w -> { }, RegistryObserver.NONE, log);
        token(r.acquire(key("k"), dev.leasehold.protocol.HoldMode.READ, 0, 30, 1, h.clock.nanoTime(), s1));
        waiter(r.acquire(key("k"), dev.leasehold.protocol.HoldMode.EXCLUSIVE, 5_000, 30, 2, h.clock.nanoTime(), s1));
        waiter(r.acquire(key("k"), dev.leasehold.protocol.HoldMode.READ, 5_000, 30, 3, h.clock.nanoTime(), s2));
        logged.clear();
        assertThat(r.withdraw(key("k"), 9, s1)).isZero();
        assertThat(logged).as("no match: nothing").isEmpty();
        assertThat(r.withdraw(key("k"), 2, s1)).isEqualTo(1);
        assertThat(logged).as("only the reader it let in").containsExactly("granted 2");
    }

    /** A withdrawn waiter's timer is cancelled: its wait running out later answers nothing more. */
    @Test
    void aWithdrawnWaitersTimerNeverFires() {
        token(h.acquire("k", 0, 30, 1, s1));
        Waiter w = waiter(h.acquireMillis("k", 200, 30, 2, s1));
        h.withdraw("k", 2, s1);
        assertThat(h.takeAnswers()).containsExactly(w);
        h.tick(1_000);
        assertThat(h.takeAnswers()).isEmpty();
    }
}
