package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;
import static dev.leasehold.registry.RegistryHarness.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * Shared holds in cluster mode on a manual clock (PROTOCOL.md 13.9): every shared decision reaches
 * the {@link DecisionLog} (grant with its limit, release, extend, expiry with its lock-delay, the
 * delay's end), and {@link LockRegistry#promote} gives a new leader every shared grant with its
 * token, its lease timed from the promotion, its delayed slots and the key's limit.
 */
class SharedPromotionTests {

    static final long DELAY_NANOS = TimeUnit.SECONDS.toNanos(2);
    static final long ELECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1500);

    final ManualClock clock = new ManualClock();
    final List<String> decisions = new ArrayList<>();
    final List<Waiter> answered = new ArrayList<>();
    final AtomicLong tokens = new AtomicLong(100);
    final LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000, DELAY_NANOS, 8, 1000),
            clock, tokens::incrementAndGet, LeaseHorizon.UNBOUNDED, answered::add, RegistryObserver.NONE, recorder());
    final SessionHandle s1 = new SessionHandle();

    @Test
    void aNewLeaderKeepsEverySharedGrantItsDelayedSlotsAndTheKeysLimit() {
        registry.promote(List.of(new HeldGrant(key("k"), HoldMode.ofLimit(2), List.of(HeldGrant.Slot.active(5, 10),
                HeldGrant.Slot.delayed(4, 3))), HeldGrant.exclusive(key("x"), 6, 20)), ELECTION_NANOS);
        assertThat(decisions).as("promotion logs nothing: the grants are in the table").isEmpty();
        KeyView view = registry.inspect(key("k"), 4);
        assertThat(view.state()).isEqualTo(KeyView.State.SHARED);
        assertThat(view.sharedMode().limit()).isEqualTo(2);
        assertThat(view.delayedSharedSlots()).isEqualTo(1);
        assertThat(view.sharedHolders()).singleElement().satisfies(g -> {
            assertThat(g.token()).isEqualTo(5);
            assertThat(g.leaseRemainingNanos()).as("its longest lease plus the election timeout, from now")
                    .isEqualTo(TimeUnit.SECONDS.toNanos(10) + ELECTION_NANOS);
            assertThat(g.holder()).isEqualTo(SessionHandle.Peer.PREVIOUS_LEADER);
        });
        assertThat(registry.sharedHeld()).isEqualTo(1);
        assertThat(registry.sharedTotal()).as("the active and the delayed slot").isEqualTo(2);
        assertThat(registry.heldKeys()).isEqualTo(2);
        assertThat(registry.check(key("k"), 5)).isTrue();
        assertThat(registry.check(key("k"), 4)).as("a delayed token is not current").isFalse();

        assertThat(acquireShared(0, 3)).as("the key keeps its limit").isEqualTo(new AcquireResult.LimitMismatch(2));
        assertThat(acquireShared(0, 2)).as("both slots taken, the delayed one too").isEqualTo(AcquireResult.TIMED_OUT);
        AcquireResult writer = registry.acquire(key("k"), HoldMode.EXCLUSIVE, 60_000, 5, 9, clock.nanoTime(), s1);
        assertThat(writer).isInstanceOf(AcquireResult.Queued.class);

        decisions.clear();
        tick(3000);
        assertThat(decisions).as("the delayed slot's delay, run again in full from the promotion")
                .containsExactly("X k 4 0");
        assertThat(acquireShared(0, 2)).as("a free slot, but a writer waits (FIFO)").isEqualTo(AcquireResult.TIMED_OUT);
        tick(8499);
        assertThat(answered).as("1 ms before the promoted lease ends").isEmpty();
        tick(1);
        assertThat(decisions).containsExactly("X k 4 0", "X k 5 2");
        assertThat(answered).as("the expired slot's lock-delay still holds the key").isEmpty();
        tick(2000);
        assertThat(decisions).containsExactly("X k 4 0", "X k 5 2", "X k 5 0", "G k 101 5");
        assertThat(answered).singleElement().satisfies(w -> {
            assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(w.token()).isEqualTo(101);
        });
        assertThat(registry.sharedTotal()).isZero();
        assertThat(registry.sharedHeld()).isZero();
        registry.reset();
        assertThat(registry.heldKeys()).isZero();
    }

    @Test
    void everySharedDecisionIsLoggedWithItsTokenAndTheKeysLimit() {
        long r1 = ((AcquireResult.Granted) acquireShared(0, 3)).token();
        long r2 = ((AcquireResult.Granted) acquireShared(0, 3)).token();
        assertThat(registry.extend(key("k"), r1, 20)).isEqualTo(ExtendResult.EXTENDED);
        assertThat(registry.release(key("k"), r2)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(registry.check(key("k"), r1)).isTrue();
        tick(20_000);
        tick(2_000);
        assertThat(decisions).containsExactly("S k 101 5 3", "S k 102 5 3", "E k 101 20", "R k 102", "C k 101",
                "X k 101 2", "X k 101 0");
        assertThat(registry.inspect(key("k"), 4).state()).isEqualTo(KeyView.State.FREE);
    }

    @Test
    void promotionOnAKeyThatIsNotEmptyKeepsWhatIsThere() {
        long r = ((AcquireResult.Granted) acquireShared(0, 2)).token();
        registry.promote(List.of(new HeldGrant(key("k"), HoldMode.ofLimit(2), List.of(HeldGrant.Slot.active(5, 10)))), 0);
        assertThat(registry.inspect(key("k"), 4).sharedHolders()).extracting(KeyView.SharedHolder::token)
                .containsExactly(r);
    }

    private AcquireResult acquireShared(int wait, int limit) {
        return registry.acquire(key("k"), HoldMode.ofLimit(limit), wait * 1000L, 5, 1, clock.nanoTime(), s1);
    }

    private void tick(long millis) {
        clock.advanceMillis(millis);
        registry.advance();
    }

    private DecisionLog recorder() {
        return new DecisionLog() {
            @Override
            public void valueSet(byte[] key, long token, byte[] value) {
                decisions.add("V " + new String(key) + " " + token);
            }

            @Override
            public void granted(byte[] key, long token, int leaseSeconds, HoldMode mode, byte[] value) {
                decisions.add(mode.isShared()
                        ? "S " + new String(key) + " " + token + " " + leaseSeconds + " " + mode.limit()
                        : "G " + new String(key) + " " + token + " " + leaseSeconds);
            }

            @Override
            public void released(byte[] key, long token) {
                decisions.add("R " + new String(key) + " " + token);
            }

            @Override
            public void extended(byte[] key, long token, int leaseSeconds) {
                decisions.add("E " + new String(key) + " " + token + " " + leaseSeconds);
            }

            @Override
            public void expired(byte[] key, long token, int delaySeconds) {
                decisions.add("X " + new String(key) + " " + token + " " + delaySeconds);
            }

            @Override
            public void delayEnded(byte[] key, long token) {
                decisions.add("X " + new String(key) + " " + token + " 0");
            }

            @Override
            public void checked(byte[] key, long token) {
                decisions.add("C " + new String(key) + " " + token);
            }
        };
    }
}
