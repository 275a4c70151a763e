package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;
import static dev.leasehold.registry.RegistryHarness.token;
import static dev.leasehold.registry.RegistryHarness.waiter;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Every cell of the request × key state matrix (PROTOCOL.md 5) and the invariants of 6, on a manual clock. */
class LockRegistryTests {

    final RegistryHarness h = new RegistryHarness(RegistryHarness.roomy());
    final SessionHandle s1 = new SessionHandle();
    final SessionHandle s2 = new SessionHandle();
    final SessionHandle s3 = new SessionHandle();

    @Nested
    class Free {
        @Test
        void acquireWithWaitZeroIsGrantedAtOnce() {
            assertThat(h.acquire("k", 0, 5, 1, s1)).isInstanceOf(AcquireResult.Granted.class);
            assertThat(h.registry.heldKeys()).isEqualTo(1);
        }

        @Test
        void acquireWithWaitIsGrantedAtOnce() {
            assertThat(h.acquire("k", 10, 5, 1, s1)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void heldKeysLimitGivesBusy() {
            RegistryHarness small = new RegistryHarness(new RegistryLimits(10, 10, 10, 2));
            small.acquire("a", 0, 5, 1, s1);
            small.acquire("b", 0, 5, 2, s1);
            assertThat(small.acquire("c", 5, 5, 3, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.HELD_KEYS));
            assertThat(small.acquire("c", 0, 5, 3, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.HELD_KEYS));
            small.release("a", 1);
            assertThat(small.acquire("c", 0, 5, 4, s1)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void releaseAndExtendAreNotHeld() {
            assertThat(h.release("k", 1)).isEqualTo(ReleaseResult.NOT_HELD);
            assertThat(h.extend("k", 1, 5)).isEqualTo(ExtendResult.NOT_HELD);
        }
    }

    /** PROTOCOL.md section 11 on a manual clock. */
    @Nested
    class Check {
        @Test
        void currentOnlyForTheActiveGrantAndNothingChanges() {
            long token = token(h.acquire("k", 0, 5, 1, s1));
            assertThat(h.registry.check(RegistryHarness.key("k"), token)).isTrue();
            assertThat(h.registry.check(RegistryHarness.key("k"), token + 1)).isFalse();
            assertThat(h.registry.check(RegistryHarness.key("other"), token)).isFalse();
            assertThat(h.registry.heldKeys()).isEqualTo(1);
            assertThat(h.release("k", token)).as("still held after checks").isEqualTo(ReleaseResult.RELEASED);
            assertThat(h.registry.check(RegistryHarness.key("k"), token)).as("after release").isFalse();
            assertThat(h.registry.heldKeys()).as("a check on a free key creates nothing").isZero();
        }

        @Test
        void notCurrentFromTheLeaseEndEvenBeforeTheTimerRan() {
            long token = token(h.acquire("k", 0, 1, 1, s1));
            h.clock.advanceMillis(999);
            assertThat(h.registry.check(RegistryHarness.key("k"), token)).as("1 ms before the end").isTrue();
            h.clock.advanceMillis(1);
            assertThat(h.registry.check(RegistryHarness.key("k"), token)).as("at the end, timer not run").isFalse();
        }

        @Test
        void theWaiterGrantedAtExpiryIsCurrentAndTheOldTokenIsNot() {
            long token = token(h.acquire("k", 0, 1, 1, s1));
            h.acquire("k", 10, 5, 2, s2);
            h.tick(1000);
            long next = h.takeAnswers().get(0).token();
            assertThat(h.registry.check(RegistryHarness.key("k"), token)).isFalse();
            assertThat(h.registry.check(RegistryHarness.key("k"), next)).isTrue();
        }
    }

    @Nested
    class Held {
        long token;

        @org.junit.jupiter.api.BeforeEach
        void hold() {
            token = token(h.acquire("k", 0, 5, 1, s1));
        }

        @Test
        void acquireWithWaitZeroTimesOutAtOnce() {
            assertThat(h.acquire("k", 0, 5, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
            assertThat(h.registry.waiters()).isZero();
        }

        @Test
        void acquireWithWaitQueues() {
            assertThat(h.acquire("k", 5, 5, 2, s2)).isInstanceOf(AcquireResult.Queued.class);
            assertThat(h.registry.waiters()).isEqualTo(1);
        }

        @Test
        void sameOwnerAgainIsANewIndependentRequest() {
            assertThat(h.acquire("k", 0, 5, 1, s1)).isEqualTo(AcquireResult.TIMED_OUT);
        }

        @Test
        void releaseOfTheActiveTokenFreesTheKey() {
            assertThat(h.release("k", token)).isEqualTo(ReleaseResult.RELEASED);
            assertThat(h.registry.heldKeys()).isZero();
            assertThat(h.release("k", token)).isEqualTo(ReleaseResult.NOT_HELD);
            assertThat(h.acquire("k", 0, 5, 3, s2)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void releaseOfAnotherTokenIsNotHeld() {
            assertThat(h.release("k", token + 1)).isEqualTo(ReleaseResult.NOT_HELD);
            assertThat(h.acquire("k", 0, 5, 3, s2)).isEqualTo(AcquireResult.TIMED_OUT);
        }

        @Test
        void extendMovesTheEndToNowPlusLeaseButNeverShortensIt() {
            h.tick(3000);
            assertThat(h.extend("k", token, 5)).isEqualTo(ExtendResult.EXTENDED); // end: 8 s
            h.tick(4900);
            assertThat(h.acquire("k", 0, 5, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
            assertThat(h.extend("k", token, 1)).isEqualTo(ExtendResult.EXTENDED); // max(8 s, 8.9 s)
            h.tick(50);
            assertThat(h.acquire("k", 0, 5, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
            h.tick(1000);
            assertThat(h.acquire("k", 0, 5, 3, s2)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void extendOfAnotherTokenIsNotHeld() {
            assertThat(h.extend("k", token + 7, 5)).isEqualTo(ExtendResult.NOT_HELD);
        }

        @Test
        void leaseNeverEndsEarlyAndEndsSoonAfter() {
            h.tick(4999);
            assertThat(h.acquire("k", 0, 5, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
            assertThat(h.registry.heldKeys()).isEqualTo(1);
            h.tick(1);
            assertThat(h.registry.heldKeys()).as("the timer processed the lease end").isZero();
            assertThat(h.acquire("k", 0, 5, 3, s2)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void releaseOrExtendAtTheLeaseEndIsNotHeldEvenBeforeTheTimerRuns() {
            h.clock.advanceMillis(5000); // no timer pass
            assertThat(h.extend("k", token, 5)).isEqualTo(ExtendResult.NOT_HELD);
            assertThat(h.release("k", token)).isEqualTo(ReleaseResult.NOT_HELD);
        }

        @Test
        void anExpiredButUnprocessedLeaseDoesNotBlockANewAcquire() {
            h.clock.advanceMillis(5000); // no timer pass
            assertThat(h.acquire("k", 0, 5, 2, s2)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void holderSessionClosingLeavesTheGrant() {
            h.registry.closeSession(s1);
            assertThat(h.acquire("k", 0, 5, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
            assertThat(h.release("k", token)).isEqualTo(ReleaseResult.RELEASED);
        }

        @Test
        void perKeyQueueLimitGivesBusy() {
            RegistryHarness small = new RegistryHarness(new RegistryLimits(2, 100, 100, 100));
            small.acquire("k", 0, 5, 1, s1);
            small.acquire("k", 5, 5, 2, s1);
            small.acquire("k", 5, 5, 3, s2);
            assertThat(small.acquire("k", 5, 5, 4, s3)).isEqualTo(new AcquireResult.Busy(BusyReason.KEY_QUEUE));
            assertThat(small.acquire("other", 5, 5, 5, s3)).isInstanceOf(AcquireResult.Granted.class);
        }

        @Test
        void totalWaitersLimitGivesBusy() {
            RegistryHarness small = new RegistryHarness(new RegistryLimits(100, 2, 100, 100));
            small.acquire("a", 0, 5, 1, s1);
            small.acquire("b", 0, 5, 2, s1);
            small.acquire("a", 5, 5, 3, s2);
            small.acquire("b", 5, 5, 4, s2);
            assertThat(small.acquire("a", 5, 5, 5, s3)).isEqualTo(new AcquireResult.Busy(BusyReason.TOTAL_WAITERS));
            assertThat(small.registry.waiters()).isEqualTo(2);
        }

        @Test
        void perSessionPendingLimitCountsOnlyWaitingAcquires() {
            RegistryHarness small = new RegistryHarness(new RegistryLimits(100, 100, 2, 100));
            small.acquire("a", 0, 5, 1, s1);
            small.acquire("b", 0, 5, 2, s2); // answered at once: does not count
            small.acquire("a", 5, 5, 3, s2);
            small.acquire("a", 5, 5, 4, s2);
            assertThat(small.acquire("a", 5, 5, 5, s2)).isEqualTo(new AcquireResult.Busy(BusyReason.SESSION));
            assertThat(small.acquire("a", 5, 5, 6, s3)).isInstanceOf(AcquireResult.Queued.class);
        }
    }

    @Nested
    class Queued {
        long token;
        Waiter first;
        Waiter second;

        @org.junit.jupiter.api.BeforeEach
        void queue() {
            token = token(h.acquire("k", 0, 5, 1, s1));
            h.tick(100);
            first = waiter(h.acquire("k", 10, 7, 2, s2));
            h.tick(100);
            second = waiter(h.acquire("k", 10, 7, 3, s3));
        }

        @Test
        void acquireWithWaitZeroTimesOutEvenIfTheHolderIsGone() {
            assertThat(h.acquire("k", 0, 5, 9, s1)).isEqualTo(AcquireResult.TIMED_OUT);
        }

        @Test
        void releaseGrantsTheHeadWithANewTokenAndItsOwnLease() {
            h.tick(300);
            assertThat(h.release("k", token)).isEqualTo(ReleaseResult.RELEASED);
            List<Waiter> answers = h.takeAnswers();
            assertThat(answers).containsExactly(first);
            assertThat(first.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(first.token()).isGreaterThan(token);
            assertThat(first.queuedMillis()).isEqualTo(400);
            assertThat(h.registry.heldKeys()).isEqualTo(1);
            // the new lease runs 7 s from the grant, whatever the waiter waited
            h.tick(6999);
            assertThat(h.release("k", first.token())).isEqualTo(ReleaseResult.RELEASED);
            assertThat(second.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        }

        @Test
        void leaseEndGrantsTheHead() {
            h.tick(4799);
            assertThat(h.takeAnswers()).isEmpty();
            h.tick(1);
            assertThat(h.takeAnswers()).containsExactly(first);
            assertThat(first.queuedMillis()).isEqualTo(4900);
        }

        @Test
        void aLaterAcquireNeverOvertakesWaiters() {
            h.clock.advanceMillis(5000); // the lease is over, the timer has not run
            assertThat(h.acquire("k", 10, 5, 4, s1)).isInstanceOf(AcquireResult.Queued.class);
            assertThat(first.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(h.takeAnswers()).containsExactly(first);
        }

        @Test
        void waitRunsOutNoEarlierThanWaitAfterReceipt() {
            h.extend("k", token, 255); // keep the key held while the waits run
            h.clock.advanceMillis(9899); // first was received 100 ms after the start, waits 10 s
            h.registry.advance();
            assertThat(h.takeAnswers()).isEmpty();
            h.tick(1);
            assertThat(h.takeAnswers()).containsExactly(first);
            assertThat(first.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
            assertThat(h.registry.waiters()).isEqualTo(1);
            h.tick(100);
            assertThat(second.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
            assertThat(h.registry.waiters()).isZero();
        }

        @Test
        void waiterOfAClosedSessionIsDroppedSilentlyAndNeverGranted() {
            h.registry.closeSession(s2);
            assertThat(first.outcome()).isEqualTo(Waiter.Outcome.DROPPED);
            assertThat(h.registry.waiters()).isEqualTo(1);
            h.release("k", token);
            assertThat(h.takeAnswers()).containsExactly(second);
            assertThat(second.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        }

        @Test
        void waitersAreGrantedInArrivalOrder() {
            h.release("k", token);
            h.release("k", first.token());
            assertThat(h.takeAnswers()).containsExactly(first, second);
            assertThat(second.token()).isGreaterThan(first.token());
        }

        @Test
        void drainAnswersBusyToEveryWaiterAndToLaterAcquires() {
            h.registry.drain();
            assertThat(h.takeAnswers()).containsExactlyInAnyOrder(first, second);
            assertThat(first.outcome()).isEqualTo(Waiter.Outcome.BUSY);
            assertThat(first.busyReason()).isEqualTo(BusyReason.DRAINING);
            assertThat(h.registry.waiters()).isZero();
            assertThat(h.acquire("x", 0, 5, 9, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.DRAINING));
            assertThat(h.release("k", token)).as("held grants are untouched").isEqualTo(ReleaseResult.RELEASED);
        }

        @Test
        void noTokenAvailableGivesTheHeadBusy() {
            h.tokensAvailable = false;
            h.release("k", token);
            assertThat(first.outcome()).isEqualTo(Waiter.Outcome.BUSY);
            assertThat(first.busyReason()).isEqualTo(BusyReason.STORAGE);
            assertThat(h.registry.heldKeys()).isZero();
        }
    }

    /** The start of the hand-off gap the server times (Release read → the waiter's A flushed). */
    @Nested
    class HandoffStart {
        @Test
        void aWaiterGrantedByAReleaseCarriesTheInstantTheReleaseWasRead() {
            long token = token(h.acquire("k", 0, 5, 1, s1));
            Waiter w = waiter(h.acquire("k", 10, 5, 2, s2));
            assertThat(w.handoffStartNanos()).isEqualTo(Waiter.NO_HANDOFF);
            h.clock.advanceMillis(3);
            long read = h.clock.nanoTime() - 1_000; // read a microsecond before the registry decided it
            assertThat(h.registry.release(RegistryHarness.key("k"), token, read)).isEqualTo(ReleaseResult.RELEASED);
            assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(w.handoffStartNanos()).isEqualTo(read);
        }

        @Test
        void aWaiterGrantedAtALeaseEndCarriesNone() {
            h.acquire("k", 0, 1, 1, s1);
            Waiter w = waiter(h.acquire("k", 10, 5, 2, s2));
            h.tick(1_100);
            assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(w.handoffStartNanos()).isEqualTo(Waiter.NO_HANDOFF);
        }

        @Test
        void onlyTheReleaseThatGrantsMarksItsWaiterAndTheLaneForgetsTheInstant() {
            long first = token(h.acquire("k", 0, 5, 1, s1));
            Waiter second = waiter(h.acquire("k", 10, 1, 2, s2));
            Waiter third = waiter(h.acquire("k", 10, 5, 3, s3));
            h.registry.release(RegistryHarness.key("k"), first, 42);
            assertThat(second.handoffStartNanos()).isEqualTo(42);
            assertThat(third.outcome()).isEqualTo(Waiter.Outcome.WAITING);
            h.tick(1_100); // second's lease runs out: third is granted by the timer, not by a Release
            assertThat(third.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(third.handoffStartNanos()).isEqualTo(Waiter.NO_HANDOFF);
        }
    }

    @Test
    void tokensStrictlyIncreaseOverAllKeys() {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            tokens.add(token(h.acquire("key-" + i, 0, 5, i, s1)));
            if (i % 3 == 0) {
                h.release("key-" + i, tokens.get(tokens.size() - 1));
                tokens.add(token(h.acquire("key-" + i, 0, 5, i, s1)));
            }
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void recoveryGraceHoldsEveryKeyUntilItEnds() {
        h.registry.holdAllUntil(h.clock.nanoTime() + 3_000_000_000L);
        assertThat(h.acquire("k", 0, 5, 1, s1)).isEqualTo(AcquireResult.TIMED_OUT);
        Waiter w = waiter(h.acquire("k", 10, 5, 2, s1));
        Waiter late = waiter(h.acquire("k", 10, 5, 3, s2));
        Waiter tooShort = waiter(h.acquire("j", 1, 5, 4, s2));
        h.tick(1000);
        assertThat(h.takeAnswers()).containsExactly(tooShort);
        assertThat(tooShort.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
        h.tick(1999);
        assertThat(h.takeAnswers()).isEmpty();
        assertThat(h.registry.graceRemainingNanos()).isPositive();
        h.tick(1);
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(w.queuedMillis()).isEqualTo(3000);
        assertThat(late.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        assertThat(h.registry.heldKeys()).isEqualTo(1);
        assertThat(h.acquire("other", 0, 5, 5, s1)).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void horizonThatCannotCoverTheLeaseGivesBusyAndExtendNotHeld() {
        ScriptedHorizon horizon = new ScriptedHorizon();
        RegistryHarness guarded = new RegistryHarness(RegistryHarness.roomy(), horizon);
        long t = token(guarded.acquire("k", 0, 5, 1, s1));
        horizon.onDisk = horizon.writable = guarded.clock.nanoTime() + 6_000_000_000L; // disk failing
        assertThat(guarded.acquire("j", 0, 10, 2, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.STORAGE));
        assertThat(guarded.registry.heldKeys()).isEqualTo(1);
        assertThat(guarded.extend("k", t, 10)).isEqualTo(ExtendResult.NOT_HELD);
        assertThat(guarded.extend("k", t, 6)).isEqualTo(ExtendResult.EXTENDED);
    }

    @Test
    void aLeaseLongerThanTheHorizonIsGrantedAtOnceButAnsweredOnlyAfterTheWrite() {
        ScriptedHorizon horizon = new ScriptedHorizon();
        RegistryHarness guarded = new RegistryHarness(RegistryHarness.roomy(), horizon);
        horizon.onDisk = guarded.clock.nanoTime() + 10_000_000_000L;
        assertThat(guarded.acquire("short", 0, 10, 1, s1)).isInstanceOf(AcquireResult.Granted.class);
        // 60 s is not on disk: the key is held at once (a later Acquire must wait or get T)...
        AcquireResult longer = guarded.acquire("k", 0, 60, 2, s1);
        assertThat(longer).isInstanceOf(AcquireResult.Queued.class);
        Waiter w = ((AcquireResult.Queued) longer).waiter();
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(w.queuedMillis()).isZero();
        assertThat(guarded.acquire("k", 0, 5, 3, s2)).isEqualTo(AcquireResult.TIMED_OUT);
        // ...but its A is handed to the notifier only after the horizon write.
        assertThat(guarded.takeAnswers()).isEmpty();
        assertThat(horizon.waiting()).isEqualTo(1);
        horizon.write(true);
        assertThat(guarded.takeAnswers()).containsExactly(w);
        horizon.onDisk = guarded.clock.nanoTime() + 10_000_000_000L;

        // The same for a waiter granted on Release, and for an Extend.
        AcquireResult queued = guarded.acquire("k", 30, 120, 4, s2);
        assertThat(guarded.release("k", w.token())).isEqualTo(ReleaseResult.RELEASED);
        Waiter next = ((AcquireResult.Queued) queued).waiter();
        assertThat(next.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(guarded.takeAnswers()).isEmpty();
        horizon.write(true);
        assertThat(guarded.takeAnswers()).containsExactly(next);
        horizon.onDisk = guarded.clock.nanoTime() + 130_000_000_000L;
        assertThat(guarded.extend("k", next.token(), 200)).isEqualTo(ExtendResult.EXTENDED_AFTER_WRITE);
        List<Boolean> extendAnswer = new ArrayList<>();
        guarded.registry.whenLeasesDurable(extendAnswer::add);
        assertThat(extendAnswer).isEmpty();
        horizon.write(true);
        assertThat(extendAnswer).containsExactly(true);
        // The lease was extended when decided: 200 s from then.
        guarded.tick(150_000);
        assertThat(guarded.acquire("k", 0, 5, 5, s1)).isEqualTo(AcquireResult.TIMED_OUT);
    }

    @Test
    void anImmediateGrantWaitingForTheHorizonStillAnswersQueuedMsZero() {
        ScriptedHorizon horizon = new ScriptedHorizon();
        RegistryHarness guarded = new RegistryHarness(RegistryHarness.roomy(), horizon);
        horizon.onDisk = guarded.clock.nanoTime();
        // Decoded 13 ms before the lane ran it (a cold server), then granted at once: no queue.
        long receipt = guarded.clock.nanoTime() - 13_000_000L;
        Waiter w = ((AcquireResult.Queued) guarded.registry.acquire(RegistryHarness.key("k"), HoldMode.EXCLUSIVE, 10_000, 30, 1, receipt, s1))
                .waiter();
        guarded.tick(5);
        horizon.write(true);
        assertThat(guarded.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(w.queuedMillis()).as("an immediate grant, even one whose answer waited for the disk").isZero();
    }

    @Test
    void aGrantWhoseHorizonWriteFailsIsAnsweredBusyAndFreesTheKeyAtItsLeaseEnd() {
        ScriptedHorizon horizon = new ScriptedHorizon();
        RegistryHarness guarded = new RegistryHarness(RegistryHarness.roomy(), horizon);
        horizon.onDisk = guarded.clock.nanoTime();
        Waiter w = ((AcquireResult.Queued) guarded.acquire("k", 0, 30, 1, s1)).waiter();
        horizon.write(false);
        assertThat(guarded.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.BUSY);
        assertThat(w.busyReason()).isEqualTo(BusyReason.STORAGE);
        horizon.onDisk = Long.MAX_VALUE;
        assertThat(guarded.acquire("k", 0, 5, 2, s1)).as("held by the unanswered grant")
                .isEqualTo(AcquireResult.TIMED_OUT);
        guarded.tick(30_000);
        assertThat(guarded.acquire("k", 0, 5, 3, s1)).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void countersReturnToZero() {
        long t = token(h.acquire("k", 0, 2, 1, s1));
        h.acquire("k", 5, 2, 2, s2);
        h.acquire("k", 5, 2, 3, s3);
        h.registry.closeSession(s3);
        h.release("k", t);
        h.tick(2000);
        assertThat(h.registry.heldKeys()).isZero();
        assertThat(h.registry.waiters()).isZero();
        assertThat(s2.waitingCount()).isZero();
        assertThat(h.registry.longestQueue()).isZero();
    }
}
