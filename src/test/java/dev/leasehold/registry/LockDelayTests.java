package dev.leasehold.registry;

import static dev.leasehold.registry.RegistryHarness.key;
import static dev.leasehold.registry.RegistryHarness.token;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Lock-delay (PROTOCOL.md section 12) on a manual clock: after an expiry, not after a Release. */
class LockDelayTests {

    private static final long DELAY_NANOS = 5_000_000_000L;

    final RegistryHarness h = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, DELAY_NANOS));
    final SessionHandle s1 = new SessionHandle();
    final SessionHandle s2 = new SessionHandle();

    @Test
    void anExpiredLeaseKeepsTheKeyFromAWaiterForTheDelay() {
        long token = token(h.acquire("k", 0, 1, 1, s1));
        h.acquire("k", 30, 10, 2, s2);
        h.tick(1000);
        assertThat(h.takeAnswers()).as("lease over, but the delay runs").isEmpty();
        assertThat(h.registry.delayedKeys()).isEqualTo(1);
        assertThat(h.registry.heldKeys()).as("no active grant").isZero();
        assertThat(h.registry.check(key("k"), token)).as("the expired token is not current").isFalse();
        assertThat(h.release("k", token)).as("nor releasable").isEqualTo(ReleaseResult.NOT_HELD);
        h.tick(4999);
        assertThat(h.takeAnswers()).as("1 ms before the delay ends").isEmpty();
        h.tick(1);
        List<Waiter> answers = h.takeAnswers();
        assertThat(answers).singleElement().satisfies(w -> {
            assertThat(w.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
            assertThat(w.token()).isGreaterThan(token);
        });
        assertThat(h.registry.delayedKeys()).isZero();
        assertThat(h.registry.heldKeys()).isEqualTo(1);
    }

    @Test
    void theDelayRunsFromTheLeaseEndNotFromALateTimer() {
        h.acquire("k", 0, 1, 1, s1);
        h.tick(1000 + 3000); // the timer got to the expiry 3 s late
        assertThat(h.acquire("k", 0, 5, 2, s2)).as("2 s of delay left").isEqualTo(AcquireResult.TIMED_OUT);
        h.tick(2000);
        assertThat(h.acquire("k", 0, 5, 3, s2)).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void aReleaseEndsAGrantWithoutDelay() {
        long token = token(h.acquire("k", 0, 1, 1, s1));
        h.acquire("k", 30, 10, 2, s2);
        assertThat(h.release("k", token)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(h.takeAnswers()).singleElement().extracting(Waiter::outcome).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(h.registry.delayedKeys()).isZero();
    }

    @Test
    void waitZeroTimesOutDuringTheDelayAndWaitersTimeOutByTheirOwnWait() {
        h.acquire("k", 0, 1, 1, s1);
        h.tick(1000);
        assertThat(h.acquire("k", 0, 5, 2, s2)).isEqualTo(AcquireResult.TIMED_OUT);
        h.acquire("k", 2, 5, 3, s2);
        h.tick(2000);
        assertThat(h.takeAnswers()).singleElement().extracting(Waiter::outcome).isEqualTo(Waiter.Outcome.TIMED_OUT);
        h.tick(3000);
        assertThat(h.registry.delayedKeys()).isZero();
        assertThat(h.acquire("k", 0, 5, 4, s2)).as("free after the delay").isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void aDelayedKeyKeepsItsHeldKeysSlot() {
        RegistryHarness small = new RegistryHarness(new RegistryLimits(10, 10, 10, 1, DELAY_NANOS));
        small.acquire("a", 0, 1, 1, s1);
        small.tick(1000);
        assertThat(small.acquire("b", 0, 5, 2, s1)).isEqualTo(new AcquireResult.Busy(BusyReason.HELD_KEYS));
        small.tick(5000);
        assertThat(small.acquire("b", 0, 5, 3, s1)).isInstanceOf(AcquireResult.Granted.class);
    }

    @Test
    void offByDefault() {
        RegistryHarness plain = new RegistryHarness(RegistryHarness.roomy());
        plain.acquire("k", 0, 1, 1, s1);
        plain.acquire("k", 30, 10, 2, s2);
        plain.tick(1000);
        assertThat(plain.takeAnswers()).singleElement().extracting(Waiter::outcome)
                .isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(plain.registry.delayedKeys()).isZero();
    }

    @Test
    void promotionRunsTheWholeDelayAgainAndResetForgetsIt() {
        h.registry.promote(List.of(HeldGrant.delayed(key("k"), 7, 5)), 0);
        assertThat(h.registry.delayedKeys()).isEqualTo(1);
        assertThat(h.acquire("k", 0, 5, 1, s1)).isEqualTo(AcquireResult.TIMED_OUT);
        h.tick(5000);
        assertThat(h.acquire("k", 0, 5, 2, s1)).isInstanceOf(AcquireResult.Granted.class);
        h.acquire("j", 0, 1, 3, s1);
        h.tick(1000);
        assertThat(h.registry.delayedKeys()).isEqualTo(1);
        h.registry.reset();
        assertThat(h.registry.delayedKeys()).isZero();
        assertThat(h.registry.heldKeys()).isZero();
    }

    @Test
    void theLimitIsWholeSecondsUpToSixty() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RegistryLimits(1, 1, 1, 1, 61_000_000_000L))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RegistryLimits(1, 1, 1, 1, 1_500_000_000L))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
