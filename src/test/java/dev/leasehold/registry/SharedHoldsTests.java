package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;
import static dev.leasehold.registry.RegistryHarness.key;
import static dev.leasehold.registry.RegistryHarness.token;
import static dev.leasehold.registry.RegistryHarness.waiter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Shared holds (PROTOCOL.md section 13) on a manual clock: every row of the extended matrix
 * (13.4), one limit per key (13.2), FIFO with batch grants (13.3), lock-delay (13.5) and the
 * capacities (13.6).
 */
class SharedHoldsTests {

    static final int READ = 0;

    final RegistryHarness h = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 0, 8, 1000));
    final SessionHandle s1 = new SessionHandle();
    final SessionHandle s2 = new SessionHandle();
    final SessionHandle s3 = new SessionHandle();

    // ---------------------------------------------------------------- FREE and SHARED open

    @Test
    void readersShareAKeyEachWithItsOwnTokenAndLease() {
        long r1 = token(h.acquireShared("k", 0, 10, 1, READ, s1));
        h.tick(1000);
        long r2 = token(h.acquireShared("k", 0, 5, 2, READ, s2));
        assertThat(r2).isGreaterThan(r1);
        assertThat(h.registry.sharedHeld()).isEqualTo(2);
        assertThat(h.registry.heldKeys()).as("a key held shared counts once").isEqualTo(1);

        h.tick(5000); // r2's lease (5 s from its grant) is over, r1's (10 s) is not
        assertThat(h.registry.check(key("k"), r2)).isFalse();
        assertThat(h.registry.check(key("k"), r1)).isTrue();
        assertThat(h.registry.sharedHeld()).as("exactly one slot freed").isEqualTo(1);
    }

    /**
     * A graceful stop protects the leases still held until their end (the restart's grace), so a
     * reader's lease longer than every exclusive one must count: before the one hold model the walk
     * saw exclusive holds only, and a restart could grant the key exclusively while a reader still
     * held it.
     */
    @Test
    void theLatestHeldLeaseEndACleanStopProtectsIncludesSharedLeases() {
        long start = h.clock.nanoTime();
        assertThat(h.registry.latestHeldLeaseEnd()).isEmpty();
        token(h.acquire("x", 0, 10, 1, s1));
        long reader = token(h.acquireShared("r", 0, 60, 2, READ, s2));
        assertThat(h.registry.latestHeldLeaseEnd()).hasValue(start + 60_000_000_000L);
        h.release("r", reader);
        assertThat(h.registry.latestHeldLeaseEnd()).hasValue(start + 10_000_000_000L);
    }

    @Test
    void aSemaphoreGrantsUpToItsLimitThenTimesOutOrQueues() {
        long p1 = token(h.acquireShared("api", 0, 30, 1, 2, s1));
        token(h.acquireShared("api", 0, 30, 2, 2, s1));
        assertThat(h.acquireShared("api", 0, 30, 3, 2, s2)).as("closed, wait 0").isEqualTo(AcquireResult.TIMED_OUT);
        Waiter w = waiter(h.acquireShared("api", 10, 30, 4, 2, s2));
        assertThat(h.release("api", p1)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(w.queuedMillis()).isZero();
    }

    @Test
    void aReadLockIsBoundedByMaxSharedHoldersPerKey() {
        for (int i = 0; i < 8; i++) {
            token(h.acquireShared("k", 0, 30, i, READ, s1));
        }
        assertThat(h.acquireShared("k", 0, 30, 9, READ, s1)).as("past the maximum, a reader waits")
                .isEqualTo(AcquireResult.TIMED_OUT);
        assertThat(h.acquireShared("k", 10, 30, 10, READ, s1)).isInstanceOf(AcquireResult.Queued.class);
    }

    @Test
    void aLimitAboveTheMaximumIsRefused() {
        assertThatThrownBy(() -> h.acquireShared("k", 0, 30, 1, 9, s1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max-shared-holders-per-key");
    }

    // ---------------------------------------------------------------- one limit per key (13.2)

    @Test
    void aMismatchedLimitIsLEvenAtWaitZeroAndOnAFullQueue() {
        RegistryHarness small = new RegistryHarness(new RegistryLimits(1, 1000, 100, 1000, 0, 8, 1000));
        small.acquireShared("k", 0, 30, 1, 3, s1);
        assertThat(small.acquireShared("k", 0, 30, 2, 4, s1)).isEqualTo(new AcquireResult.LimitMismatch(3));
        assertThat(small.acquireShared("k", 0, 30, 3, READ, s1)).as("0 is a value of its own")
                .isEqualTo(new AcquireResult.LimitMismatch(3));
        small.acquire("k", 10, 30, 4, s2); // the queue (1 per key) is full now
        assertThat(small.acquireShared("k", 10, 30, 5, 4, s1)).as("L before B")
                .isEqualTo(new AcquireResult.LimitMismatch(3));
        assertThat(small.acquireShared("k", 10, 30, 6, 3, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.KEY_QUEUE));
    }

    @Test
    void sharedWaitersFixTheLimitAndTheLastSharedUseForgetsIt() {
        long w = token(h.acquire("k", 0, 30, 1, s1)); // held exclusively: no limit yet
        Waiter sem = waiter(h.acquireShared("k", 10, 30, 2, 2, s2));
        assertThat(h.acquireShared("k", 10, 30, 3, 5, s3)).as("a queued S fixes it")
                .isEqualTo(new AcquireResult.LimitMismatch(2));
        h.registry.closeSession(s2);
        assertThat(sem.outcome()).isEqualTo(Waiter.Outcome.DROPPED);
        assertThat(h.acquireShared("k", 10, 30, 4, 5, s3)).as("forgotten: a new limit")
                .isInstanceOf(AcquireResult.Queued.class);
        h.release("k", w);
        long p = h.takeAnswers().get(0).token();
        h.release("k", p);
        assertThat(token(h.acquireShared("k", 0, 30, 5, 7, s3))).as("free again: any limit").isGreaterThan(p);
    }

    // ---------------------------------------------------------------- exclusive states

    @Test
    void aSharedAcquireOnAnExclusiveKeyTimesOutOrQueuesAndIsGrantedAtTheRelease() {
        long x = token(h.acquire("k", 0, 30, 1, s1));
        assertThat(h.acquireShared("k", 0, 30, 2, READ, s2)).isEqualTo(AcquireResult.TIMED_OUT);
        Waiter r = waiter(h.acquireShared("k", 10, 30, 3, READ, s2));
        h.tick(250);
        h.release("k", x);
        assertThat(h.takeAnswers()).containsExactly(r);
        assertThat(r.token()).isGreaterThan(x);
        assertThat(r.queuedMillis()).isEqualTo(250);
    }

    @Test
    void anAcquireOnASharedKeyWaitsForEveryReader() {
        long r1 = token(h.acquireShared("k", 0, 30, 1, READ, s1));
        long r2 = token(h.acquireShared("k", 0, 30, 2, READ, s1));
        assertThat(h.acquire("k", 0, 30, 3, s2)).as("writer, wait 0").isEqualTo(AcquireResult.TIMED_OUT);
        Waiter writer = waiter(h.acquire("k", 10, 30, 4, s2));
        h.release("k", r1);
        assertThat(h.takeAnswers()).as("one reader still holds").isEmpty();
        h.release("k", r2);
        assertThat(h.takeAnswers()).containsExactly(writer);
        assertThat(writer.token()).isGreaterThan(r2);
    }

    // ---------------------------------------------------------------- FIFO and batches (13.3)

    @Test
    void aReaderNeverOvertakesAQueuedWriterEvenWithAFreeSlot() {
        long r1 = token(h.acquireShared("k", 0, 30, 1, READ, s1));
        Waiter writer = waiter(h.acquire("k", 10, 30, 2, s2));
        assertThat(h.acquireShared("k", 0, 30, 3, READ, s3)).as("wait 0 behind a waiter").isEqualTo(AcquireResult.TIMED_OUT);
        Waiter reader = waiter(h.acquireShared("k", 10, 30, 4, READ, s3));
        h.release("k", r1);
        assertThat(h.takeAnswers()).containsExactly(writer);
        h.release("k", writer.token());
        assertThat(h.takeAnswers()).containsExactly(reader);
    }

    @Test
    void consecutiveSharedWaitersAreGrantedInOneDecisionUpToTheNextWriter() {
        long x = token(h.acquire("k", 0, 30, 1, s1));
        Waiter a = waiter(h.acquireShared("k", 10, 30, 2, READ, s2));
        h.tick(5);
        Waiter b = waiter(h.acquireShared("k", 10, 30, 3, READ, s2));
        Waiter c = waiter(h.acquireShared("k", 10, 30, 4, READ, s3));
        Waiter writer = waiter(h.acquire("k", 10, 30, 5, s3));
        Waiter d = waiter(h.acquireShared("k", 10, 30, 6, READ, s3));
        h.tick(100);
        h.release("k", x);
        assertThat(h.takeAnswers()).containsExactly(a, b, c);
        assertThat(List.of(a.token(), b.token(), c.token())).isSorted().doesNotHaveDuplicates();
        assertThat(a.queuedMillis()).isEqualTo(105);
        assertThat(b.queuedMillis()).as("one grant instant").isEqualTo(100);
        assertThat(writer.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        assertThat(d.outcome()).as("never past a waiting writer").isEqualTo(Waiter.Outcome.WAITING);
        KeyView v = h.registry.inspect(key("k"), 5);
        assertThat(v.state()).isEqualTo(KeyView.State.SHARED);
        assertThat(v.sharedHolders()).extracting(KeyView.SharedHolder::token)
                .containsExactly(a.token(), b.token(), c.token());
        assertThat(v.oldestWaiterKinds()).containsExactly("exclusive", "shared");
    }

    @Test
    void aWriterWhoseWaitRunsOutLetsTheReadersBehindItIn() {
        token(h.acquireShared("k", 0, 30, 1, READ, s1));
        Waiter writer = waiter(h.acquire("k", 2, 30, 2, s2));
        Waiter reader = waiter(h.acquireShared("k", 10, 30, 3, READ, s3));
        h.tick(2000);
        assertThat(h.takeAnswers()).containsExactly(writer, reader);
        assertThat(writer.outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);
        assertThat(reader.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
    }

    @Test
    void aSemaphoreBatchStopsWhenTheSlotsAreFull() {
        long x = token(h.acquire("k", 0, 30, 1, s1));
        Waiter a = waiter(h.acquireShared("k", 10, 30, 2, 2, s2));
        Waiter b = waiter(h.acquireShared("k", 10, 30, 3, 2, s2));
        Waiter c = waiter(h.acquireShared("k", 10, 30, 4, 2, s2));
        h.release("k", x);
        assertThat(h.takeAnswers()).containsExactly(a, b);
        h.release("k", b.token());
        assertThat(h.takeAnswers()).containsExactly(c);
    }

    // ---------------------------------------------------------------- Release, Extend, Check

    @Test
    void releaseExtendAndCheckAddressOneSharedGrantOnly() {
        long r1 = token(h.acquireShared("k", 0, 5, 1, 3, s1));
        long r2 = token(h.acquireShared("k", 0, 5, 2, 3, s1));
        assertThat(h.extend("k", r1, 20)).isEqualTo(ExtendResult.EXTENDED);
        assertThat(h.registry.check(key("k"), r1)).isTrue();
        assertThat(h.release("k", r2)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(h.release("k", r2)).as("already released").isEqualTo(ReleaseResult.NOT_HELD);
        assertThat(h.registry.check(key("k"), r2)).isFalse();
        assertThat(h.release("other", r1)).as("right token, other key").isEqualTo(ReleaseResult.NOT_HELD);
        h.tick(5000);
        assertThat(h.registry.check(key("k"), r1)).as("extended past 5 s").isTrue();
        assertThat(h.extend("k", 999, 5)).isEqualTo(ExtendResult.NOT_HELD);
        h.tick(15_000);
        assertThat(h.registry.check(key("k"), r1)).isFalse();
        assertThat(h.registry.inspect(key("k"), 5).state()).isEqualTo(KeyView.State.FREE);
        assertThat(h.registry.heldKeys()).isZero();
        assertThat(h.registry.sharedTotal()).isZero();
    }

    @Test
    void aLeaseEndFreesExactlyOneSlotForTheHeadWaiter() {
        token(h.acquireShared("k", 0, 5, 1, 2, s1));
        long longer = token(h.acquireShared("k", 0, 30, 2, 2, s1));
        Waiter a = waiter(h.acquireShared("k", 30, 30, 3, 2, s2));
        Waiter b = waiter(h.acquireShared("k", 30, 30, 4, 2, s2));
        h.tick(5000);
        assertThat(h.takeAnswers()).containsExactly(a);
        assertThat(b.outcome()).isEqualTo(Waiter.Outcome.WAITING);
        assertThat(h.registry.check(key("k"), longer)).isTrue();
    }

    // ---------------------------------------------------------------- lock-delay (13.5)

    @Test
    void anExpiredSharedGrantHoldsItsSlotForTheDelayAndAWriterWaitsForEveryDelay() {
        RegistryHarness d = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 3_000_000_000L, 8, 1000));
        long r1 = token(d.acquireShared("k", 0, 2, 1, 2, s1));
        long r2 = token(d.acquireShared("k", 0, 30, 2, 2, s1));
        Waiter sem = waiter(d.acquireShared("k", 30, 30, 3, 2, s2));
        d.tick(2000); // r1 expired: its slot is delayed, so the waiter still has no slot
        assertThat(d.takeAnswers()).isEmpty();
        assertThat(d.release("k", r1)).as("no active token in a delay").isEqualTo(ReleaseResult.NOT_HELD);
        KeyView v = d.registry.inspect(key("k"), 5);
        assertThat(v.delayedSharedSlots()).isEqualTo(1);
        assertThat(v.sharedMode().limit()).isEqualTo(2);
        assertThat(d.acquireShared("k", 0, 30, 4, 5, s3)).as("a delayed slot keeps the limit")
                .isEqualTo(new AcquireResult.LimitMismatch(2));
        d.release("k", r2); // a Release frees its slot at once: the other free slot goes to the waiter
        assertThat(d.takeAnswers()).containsExactly(sem);
        Waiter writer = waiter(d.acquire("k", 30, 30, 5, s3));
        d.release("k", sem.token());
        assertThat(d.takeAnswers()).as("r1's delay still holds a slot").isEmpty();
        d.tick(2995);
        assertThat(d.takeAnswers()).as("5 ms before the delay ends (3 s from the lease end)").isEmpty();
        d.tick(5);
        assertThat(d.takeAnswers()).containsExactly(writer);
        assertThat(writer.token()).isGreaterThan(sem.token());
    }

    @Test
    void freeSlotsAreStillGrantedDuringAnotherSlotsDelay() {
        RegistryHarness d = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 3_000_000_000L, 8, 1000));
        d.acquireShared("k", 0, 1, 1, READ, s1);
        d.tick(1000);
        assertThat(d.acquireShared("k", 0, 30, 2, READ, s2)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(d.acquire("k", 0, 30, 3, s2)).isEqualTo(AcquireResult.TIMED_OUT);
    }

    @Test
    void anExclusiveDelayHoldsTheWholeKeyFromReadersToo() {
        RegistryHarness d = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 3_000_000_000L, 8, 1000));
        d.acquire("k", 0, 1, 1, s1);
        d.tick(1000);
        assertThat(d.acquireShared("k", 0, 30, 2, READ, s2)).isEqualTo(AcquireResult.TIMED_OUT);
        Waiter r = waiter(d.acquireShared("k", 10, 30, 3, READ, s2));
        d.tick(2995);
        assertThat(d.takeAnswers()).isEmpty();
        d.tick(5);
        assertThat(d.takeAnswers()).containsExactly(r);
    }

    // ---------------------------------------------------------------- capacities, grace, drain

    @Test
    void theSharedTotalIsCheckedAtArrivalAndCountsWaiters() {
        RegistryHarness small = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 0, 8, 2));
        long a = token(small.acquireShared("a", 0, 30, 1, READ, s1));
        small.acquire("b", 0, 30, 2, s1);
        small.acquireShared("b", 10, 30, 3, READ, s1);
        assertThat(small.acquireShared("c", 0, 30, 4, READ, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.SHARED_TOTAL));
        assertThat(small.acquire("c", 0, 30, 5, s1)).as("exclusive grants do not count")
                .isInstanceOf(AcquireResult.Granted.class);
        small.release("a", a);
        assertThat(small.acquireShared("c2", 0, 30, 6, READ, s1)).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void aKeyHeldSharedCountsOnceAgainstMaxHeldKeys() {
        RegistryHarness small = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1, 0, 8, 100));
        small.acquireShared("a", 0, 30, 1, READ, s1);
        small.acquireShared("a", 0, 30, 2, READ, s1);
        assertThat(small.acquireShared("b", 0, 30, 3, READ, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.HELD_KEYS));
        assertThat(small.registry.sharedTotal()).as("a refused S leaves no count").isEqualTo(2);
    }

    @Test
    void queueLimitsCountSharedWaiters() {
        RegistryHarness small = new RegistryHarness(new RegistryLimits(100, 1000, 1, 1000, 0, 8, 100));
        small.acquire("k", 0, 30, 1, s1);
        small.acquireShared("k", 10, 30, 2, READ, s2);
        assertThat(small.acquireShared("k", 10, 30, 3, READ, s2)).isEqualTo(new AcquireResult.Busy(BusyReason.SESSION));
        assertThat(small.registry.sharedTotal()).isEqualTo(1);
    }

    @Test
    void duringTheGraceASharedAcquireBehavesAsAnAcquire() {
        h.registry.holdAllUntil(h.clock.nanoTime() + 2_000_000_000L);
        assertThat(h.acquireShared("k", 0, 30, 1, READ, s1)).isEqualTo(AcquireResult.TIMED_OUT);
        Waiter a = waiter(h.acquireShared("k", 10, 30, 2, READ, s1));
        Waiter b = waiter(h.acquireShared("k", 10, 30, 3, READ, s2));
        assertThat(h.acquireShared("k", 10, 30, 4, 1, s2)).as("the limit check comes first")
                .isEqualTo(new AcquireResult.LimitMismatch(0));
        h.tick(2000);
        assertThat(h.takeAnswers()).containsExactly(a, b);
    }

    @Test
    void aDrainAnswersSharedWaitersBusyAndLeavesSharedGrants() {
        long r = token(h.acquireShared("k", 0, 30, 1, 1, s1));
        Waiter w = waiter(h.acquireShared("k", 10, 30, 2, 1, s2));
        h.registry.drain();
        assertThat(h.takeAnswers()).containsExactly(w);
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.BUSY);
        assertThat(h.registry.check(key("k"), r)).isTrue();
        assertThat(h.acquireShared("k", 0, 30, 3, 1, s2)).isEqualTo(new AcquireResult.Busy(BusyReason.DRAINING));
    }

    @Test
    void aClosedSessionsSharedWaiterIsNeverGrantedAndTheNextOneIs() {
        long x = token(h.acquire("k", 0, 30, 1, s1));
        Waiter dead = waiter(h.acquireShared("k", 10, 30, 2, READ, s2));
        Waiter live = waiter(h.acquireShared("k", 10, 30, 3, READ, s3));
        h.registry.closeSession(s2);
        h.release("k", x);
        assertThat(h.takeAnswers()).containsExactly(live);
        assertThat(dead.outcome()).isEqualTo(Waiter.Outcome.DROPPED);
        assertThat(h.registry.sharedTotal()).isEqualTo(1);
    }

    @Test
    void resetForgetsSharedGrants() {
        h.acquireShared("k", 0, 30, 1, READ, s1);
        h.acquireShared("k", 0, 30, 2, READ, s1);
        h.registry.reset();
        assertThat(h.registry.sharedTotal()).isZero();
        assertThat(h.registry.sharedHeld()).isZero();
        assertThat(h.registry.heldKeys()).isZero();
        assertThat(h.acquire("k", 0, 30, 3, s1)).isInstanceOf(AcquireResult.Granted.class);
    }
}
