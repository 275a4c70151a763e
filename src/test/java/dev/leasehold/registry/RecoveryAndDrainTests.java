package dev.leasehold.registry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.testing.ManualClocks;
import dev.leasehold.testing.support.Wait;

/**
 * The registry's side of PROTOCOL.md section 8, on a test clock: the recovery grace (every key
 * behaves as HELD), the drain (B to every waiter and every later Acquire), and the lease
 * horizon (no grant or Extend whose lease end is not on disk).
 */
class RecoveryAndDrainTests {

    static final long S = SECONDS.toNanos(1);

    final ManualClocks clock = new ManualClocks();
    final AtomicLong nextToken = new AtomicLong();
    final ScriptedHorizon horizon = new ScriptedHorizon();
    final List<Waiter> answered = new ArrayList<>();
    final LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), clock,
            nextToken::incrementAndGet, horizon, answered::add, RegistryObserver.NONE, 4);
    final SessionHandle session = new SessionHandle();

    AcquireResult acquire(String key, int wait, int lease, long owner) {
        return registry.acquire(key.getBytes(UTF_8), HoldMode.EXCLUSIVE, wait * 1000L, lease, owner, clock.nanoTime(), session);
    }

    void advance(long amount, java.util.concurrent.TimeUnit unit) {
        clock.advance(amount, unit);
        registry.advance();
    }

    @Test
    void duringTheGraceWaitZeroGetsTAndWaitersAreGrantedInOrderWhenItEnds() {
        registry.holdAllUntil(clock.nanoTime() + 3 * S);
        assertThat(registry.graceRemainingNanos()).isEqualTo(3 * S);
        assertThat(acquire("a", 0, 5, 1)).isEqualTo(AcquireResult.TIMED_OUT);
        AcquireResult first = acquire("a", 10, 5, 2);
        advance(1, SECONDS);
        AcquireResult second = acquire("a", 10, 5, 3);
        AcquireResult tooShort = acquire("b", 1, 5, 4); // its wait ends inside the grace
        assertThat(first).isInstanceOf(AcquireResult.Queued.class);
        assertThat(second).isInstanceOf(AcquireResult.Queued.class);

        advance(1, SECONDS);
        assertThat(answered).hasSize(1);
        assertThat(answered.get(0).owner()).isEqualTo(4);
        assertThat(answered.get(0).outcome()).isEqualTo(Waiter.Outcome.TIMED_OUT);

        advance(999, MILLISECONDS);
        assertThat(answered).hasSize(1).as("nothing granted before the grace ends");
        advance(1, MILLISECONDS);
        assertThat(answered).hasSize(2);
        Waiter granted = answered.get(1);
        assertThat(granted.owner()).isEqualTo(2);
        assertThat(granted.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(granted.queuedMillis()).isEqualTo(3000);
        assertThat(registry.graceRemainingNanos()).isZero();
        // The second waiter of "a" waits for the first one's lease, as usual.
        assertThat(((AcquireResult.Queued) second).waiter().outcome()).isEqualTo(Waiter.Outcome.WAITING);
        assertThat(acquire("c", 0, 5, 5)).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void drainAnswersBToEveryWaiterAndToEveryLaterAcquireButLeavesGrants() {
        AcquireResult held = acquire("k", 0, 30, 1);
        assertThat(held).isInstanceOf(AcquireResult.Granted.class);
        acquire("k", 30, 5, 2);
        acquire("k", 30, 5, 3);
        registry.holdAllUntil(clock.nanoTime() + 100 * S);
        acquire("other", 30, 5, 4); // queued behind the grace

        registry.drain();
        assertThat(answered).extracting(Waiter::owner).containsExactlyInAnyOrder(2L, 3L, 4L);
        assertThat(answered).allSatisfy(w -> {
            assertThat(w.outcome()).isEqualTo(Waiter.Outcome.BUSY);
            assertThat(w.busyReason()).isEqualTo(BusyReason.DRAINING);
        });
        assertThat(registry.waiters()).isZero();
        assertThat(acquire("new", 0, 5, 5)).isEqualTo(new AcquireResult.Busy(BusyReason.DRAINING));
        assertThat(acquire("new", 10, 5, 6)).isEqualTo(new AcquireResult.Busy(BusyReason.DRAINING));
        // The holder keeps its grant until it releases or the lease ends.
        assertThat(registry.release("k".getBytes(UTF_8), ((AcquireResult.Granted) held).token()))
                .isEqualTo(ReleaseResult.RELEASED);
    }

    /**
     * An Acquire that passed the early draining check and is still on its way to its lane lock
     * when drain() sweeps that lane must not end up queued without an answer. A huge key makes
     * the way long (hashing it takes milliseconds), so drain() runs inside that window; if the
     * timing misses, the round passes vacuously, it never fails spuriously.
     */
    @Test
    void anAcquireRacingWithDrainIsNeverLeftQueuedWithoutAnAnswer() throws Exception {
        byte[] hugeKey = new byte[32 << 20];
        java.util.Arrays.fill(hugeKey, (byte) 'k');
        for (int round = 0; round < 3; round++) {
            LockRegistry r = new LockRegistry(new RegistryLimits(10, 10, 10, 10), System::nanoTime,
                    nextToken::incrementAndGet, LeaseHorizon.UNBOUNDED, w -> { }, RegistryObserver.NONE, 1);
            SessionHandle s = new SessionHandle();
            assertThat(r.acquire(hugeKey, HoldMode.EXCLUSIVE, 0, 60, 1, System.nanoTime(), s)).isInstanceOf(AcquireResult.Granted.class);
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            AtomicReference<AcquireResult> racing = new AtomicReference<>();
            Thread acquirer = new Thread(() -> {
                started.countDown();
                racing.set(r.acquire(hugeKey, HoldMode.EXCLUSIVE, 60_000, 5, 2, System.nanoTime(), s));
            });
            acquirer.start();
            assertThat(started.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("round %d: the acquirer thread started", round)
                    .isTrue();
            Thread.sleep(2); // a head start into the race, either interleaving must hold (not an ordering)
            r.drain();
            Wait.until("round " + round + ": the acquirer thread to end after the drain (its state)", Duration.ofSeconds(30),
                    acquirer::getState, state -> state == Thread.State.TERMINATED);
            assertThat(r.waiters()).as("round %d", round).isZero();
            AcquireResult result = racing.get();
            if (result instanceof AcquireResult.Queued q) {
                assertThat(q.waiter().outcome()).isEqualTo(Waiter.Outcome.BUSY); // swept by drain
            } else {
                assertThat(result).isEqualTo(new AcquireResult.Busy(BusyReason.DRAINING));
            }
        }
    }

    @Test
    void aLeaseEndNotOnDiskIsNeverGrantedNorExtended() {
        AcquireResult held = acquire("k", 0, 10, 1);
        long token = ((AcquireResult.Granted) held).token();
        AcquireResult waiting = acquire("k", 30, 5, 2);
        horizon.onDisk = horizon.writable = clock.nanoTime(); // the disk fails
        assertThat(acquire("free", 0, 5, 3)).isEqualTo(new AcquireResult.Busy(BusyReason.STORAGE));
        // An Extend it cannot record gets N; the grant keeps its current end.
        assertThat(registry.extend("k".getBytes(UTF_8), token, 60)).isEqualTo(ExtendResult.NOT_HELD);
        assertThat(registry.release("k".getBytes(UTF_8), token)).isEqualTo(ReleaseResult.RELEASED);
        // The head waiter cannot be granted a lease that is not on disk: B, never a silent wait.
        Waiter w = ((AcquireResult.Queued) waiting).waiter();
        assertThat(w.outcome()).isEqualTo(Waiter.Outcome.BUSY);
        assertThat(w.busyReason()).isEqualTo(BusyReason.STORAGE);
        long tokensBefore = nextToken.get();
        horizon.onDisk = horizon.writable = Long.MAX_VALUE;
        assertThat(acquire("free", 0, 5, 4)).isInstanceOf(AcquireResult.Granted.class);
        assertThat(nextToken.get()).isEqualTo(tokensBefore + 1).as("no token was spent on refused grants");
    }

    @Test
    void noTokenMeansBusyNotAWait() {
        LockRegistry r = new LockRegistry(new RegistryLimits(10, 10, 10, 10), clock, () -> TokenSource.NONE,
                LeaseHorizon.UNBOUNDED, answered::add, RegistryObserver.NONE, 4);
        assertThat(r.acquire("k".getBytes(UTF_8), HoldMode.EXCLUSIVE, 5_000, 5, 1, clock.nanoTime(), session))
                .isEqualTo(new AcquireResult.Busy(BusyReason.STORAGE));
    }
}
