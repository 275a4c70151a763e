package dev.leasehold.registry;

import static dev.leasehold.registry.RegistryHarness.key;
import static dev.leasehold.registry.RegistryHarness.token;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;

/**
 * Watches in the registry (PROTOCOL.md section 16) on a manual clock: one event per decision with
 * its cause, lock-delay and the recovery grace, a watched free key that stays known, and the
 * order of {@link Watch#decided} and {@link Watch#afterDecided}.
 */
class RegistryWatchTests {

    private static final long DELAY_NANOS = 5_000_000_000L;

    final RegistryHarness h = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, DELAY_NANOS));
    final SessionHandle s1 = new SessionHandle();
    final SessionHandle s2 = new SessionHandle();

    /** Records its events; "after" marks each {@link #afterDecided}. */
    static final class Recording extends Watch {
        final List<KeyEvent> events = new ArrayList<>();
        final List<String> calls = new ArrayList<>();

        @Override
        protected void decided(KeyEvent event) {
            events.add(event);
            calls.add("decided");
        }

        @Override
        protected void afterDecided() {
            calls.add("after");
        }

        KeyEvent last() {
            return events.get(events.size() - 1);
        }
    }

    static KeyEvent ev(char state, int cause, long token, int count, int limit) {
        return new KeyEvent(state, cause, token, count, limit, null);
    }

    Recording watch(String k) {
        Recording w = new Recording();
        assertThat(h.registry.watch(key(k), w)).isTrue();
        return w;
    }

    @Test
    void anExpiryIntoLockDelayIsDWithCauseExpiryAndItsEndFreeWithCauseDelayEnd() {
        Recording w = watch("k");
        long t = token(h.acquire("k", 0, 1, 1, s1));
        h.tick(1000);
        h.tick(5000);
        assertThat(w.events).containsExactly(ev('F', 0, 0, 0, 0), ev('H', 1, t, 1, 0), ev('D', 3, t, 0, 0),
                ev('F', 4, t, 0, 0));
    }

    @Test
    void theEndOfALockDelayThatGrantsAWaiterIsOneEventWithCauseGrant() {
        long t = token(h.acquire("k", 0, 1, 1, s1));
        h.acquire("k", 30, 10, 2, s2);
        Recording w = watch("k");
        h.tick(1000);
        h.tick(5000);
        long t2 = h.takeAnswers().get(0).token();
        assertThat(w.events).containsExactly(ev('H', 0, t, 1, 0), ev('D', 3, t, 0, 0), ev('H', 1, t2, 1, 0));
    }

    @Test
    void aSharedExpiryIntoItsDelayKeepsItsSlotAndIsNoEvent() {
        long r1 = token(h.acquireShared("k", 0, 1, 1, 3, s1));
        long r2 = token(h.acquireShared("k", 0, 30, 2, 3, s1));
        Recording w = watch("k");
        h.tick(1000);
        assertThat(w.events).as("the slot is kept by its delay: count 2 still").containsExactly(ev('S', 0, r2, 2, 3));
        h.tick(5000);
        assertThat(w.last()).isEqualTo(ev('S', 4, r2, 1, 3));
        assertThat(r1).isLessThan(r2);
    }

    @Test
    void anExpiryNoticedByTheNextAcquireIsOneEventWithCauseGrant() {
        RegistryHarness noDelay = new RegistryHarness(RegistryHarness.roomy());
        Recording w = new Recording();
        noDelay.registry.watch(key("k"), w);
        long t = token(noDelay.acquire("k", 0, 1, 1, s1));
        noDelay.clock.advanceMillis(1000); // the lease is over; no timer has run yet
        long t2 = token(noDelay.acquire("k", 0, 5, 2, s2));
        assertThat(w.events).containsExactly(ev('F', 0, 0, 0, 0), ev('H', 1, t, 1, 0), ev('H', 1, t2, 1, 0));
    }

    @Test
    void theRecoveryGraceIsGAndItsEndIsFreeWithCauseGraceEndOrAGrant() {
        h.registry.holdAllUntil(h.clock.nanoTime() + 3_000_000_000L);
        Recording idle = watch("idle");
        Recording busy = watch("busy");
        h.acquire("busy", 30, 10, 1, s1); // queued until the grace ends
        h.tick(3000);
        long t = h.takeAnswers().get(0).token();
        assertThat(idle.events).containsExactly(ev('G', 0, 0, 0, 0), ev('F', 6, 0, 0, 0));
        assertThat(busy.events).containsExactly(ev('G', 0, 0, 0, 0), ev('H', 1, t, 1, 0));
    }

    @Test
    void aWatchedFreeKeyKeepsItsHighestTokenAndIsForgottenWithItsLastWatch() {
        Recording first = watch("k");
        long t = token(h.acquire("k", 0, 10, 1, s1));
        h.release("k", t);
        assertThat(first.last()).isEqualTo(ev('F', 2, t, 0, 0));
        Recording second = watch("k");
        assertThat(second.events).as("the key stayed known").containsExactly(ev('F', 0, t, 0, 0));
        h.registry.unwatch(first);
        h.registry.unwatch(second);
        Recording third = watch("k");
        assertThat(third.events).as("forgotten with its last watch").containsExactly(ev('F', 0, 0, 0, 0));
        h.acquire("k", 0, 10, 2, s1);
        assertThat(first.events).as("an ended watch is told nothing").hasSize(3);
    }

    @Test
    void eachDecisionIsOneDecidedCallThenOneAfterDecidedOnceTheLockIsLetGo() {
        Recording w = watch("k");
        long t = token(h.acquire("k", 0, 10, 1, s1));
        h.acquire("k", 30, 10, 2, s2);
        h.release("k", t); // release and hand-off: one decision
        assertThat(w.calls).containsExactly("decided", "after", "decided", "after", "decided", "after");
        assertThat(w.last().state()).isEqualTo(Answer.Event.STATE_HELD);
        assertThat(w.last().cause()).isEqualTo(Answer.Event.CAUSE_GRANT);
    }
}
