package dev.leasehold.registry;

import static dev.leasehold.registry.RegistryHarness.key;
import static dev.leasehold.registry.RegistryHarness.token;
import static dev.leasehold.registry.RegistryHarness.waiter;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.HoldMode;

/**
 * Values in the registry (PROTOCOL.md section 17, invariant 6.9), on a manual clock: a value belongs
 * to one exclusive grant, set by its {@code M} (also when granted from the queue) or a {@code V},
 * kept by Extend, gone with the grant (Release, lease end, lock-delay), never passed to the next
 * holder, and shown nowhere while its {@code M} waits.
 */
class RegistryValuesTests {

    static final long TICK_MILLIS = TimeUnit.NANOSECONDS.toMillis(LockRegistry.TICK_NANOS);

    final RegistryHarness h = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 0, 8, 1000));
    final SessionHandle s1 = new SessionHandle();
    final SessionHandle s2 = new SessionHandle();

    private AcquireResult acquireWithValue(RegistryHarness r, String k, long waitMillis, int lease, long owner,
            SessionHandle s, String value) {
        return r.registry.acquire(key(k), HoldMode.EXCLUSIVE, waitMillis, lease, owner, r.clock.nanoTime(), s,
                value.getBytes(UTF_8));
    }

    private ValueResult set(String k, long token, String value) {
        return h.registry.setValue(key(k), token, value.getBytes(UTF_8));
    }

    /** The holder's value as inspect shows it, or null. */
    private String shown(RegistryHarness r, String k) {
        byte[] v = r.registry.inspect(key(k), 10).value();
        return v == null ? null : new String(v, UTF_8);
    }

    private String shown(String k) {
        return shown(h, k);
    }

    @Test
    void anMsValueIsTheGrantsAndSurvivesExtend() {
        long t = token(acquireWithValue(h, "lead", 0, 10, 1, s1, "n1"));
        assertThat(shown("lead")).isEqualTo("n1");
        h.tick(9_000);
        assertThat(h.extend("lead", t, 10)).isEqualTo(ExtendResult.EXTENDED);
        h.tick(9_000);
        assertThat(shown("lead")).as("kept by Extend, past the first lease's end").isEqualTo("n1");
    }

    @Test
    void aVReplacesClearsAndSetsTheSameValueWithoutAChange() {
        long t = token(h.acquire("lead", 0, 30, 1, s1));
        assertThat(shown("lead")).as("a grant made by A has none").isNull();
        assertThat(set("lead", t, "n2")).isEqualTo(ValueResult.SET_CHANGED);
        assertThat(shown("lead")).isEqualTo("n2");
        assertThat(set("lead", t, "n2")).as("the same bytes: V, no change").isEqualTo(ValueResult.SET_UNCHANGED);
        assertThat(h.registry.setValue(key("lead"), t, new byte[] {'a', 0x0A, 'b'})).isEqualTo(ValueResult.SET_CHANGED);
        assertThat(h.registry.inspect(key("lead"), 0).value()).containsExactly('a', 0x0A, 'b');
        assertThat(set("lead", t, "")).as("vlen 0 clears").isEqualTo(ValueResult.SET_CHANGED);
        assertThat(shown("lead")).isNull();
        assertThat(set("lead", t, "")).isEqualTo(ValueResult.SET_UNCHANGED);
    }

    @Test
    void aVOfAnyOtherTokenIsNotHeldAndChangesNothing() {
        long t = token(acquireWithValue(h, "lead", 0, 30, 1, s1, "n1"));
        assertThat(set("lead", t + 1, "x")).isEqualTo(ValueResult.NOT_HELD);
        assertThat(set("lead", 0, "x")).as("token 0").isEqualTo(ValueResult.NOT_HELD);
        assertThat(set("other", t, "x")).as("another key").isEqualTo(ValueResult.NOT_HELD);
        assertThat(set("free", 1, "x")).as("a free key").isEqualTo(ValueResult.NOT_HELD);
        assertThat(shown("lead")).isEqualTo("n1");
        assertThat(shown("other")).isNull();
        long read = token(h.acquireShared("cfg", 0, 30, 2, 0, s1));
        assertThat(set("cfg", read, "x")).as("a shared grant has no value in 1.4").isEqualTo(ValueResult.NOT_HELD);
        assertThat(h.registry.inspect(key("cfg"), 0).value()).isNull();
    }

    @Test
    void aValueOnASharedAcquireIsRefused() {
        assertThatThrownBy(() -> h.registry.acquire(key("cfg"), HoldMode.READ, 0, 30, 1, h.clock.nanoTime(), s1,
                new byte[] {1})).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theValueEndsWithARelease() {
        long t = token(acquireWithValue(h, "lead", 0, 30, 1, s1, "n1"));
        assertThat(h.release("lead", t)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(shown("lead")).isNull();
        assertThat(set("lead", t, "n1")).as("a released token").isEqualTo(ValueResult.NOT_HELD);
        long next = token(h.acquire("lead", 0, 30, 2, s2));
        assertThat(shown("lead")).as("the next holder by A has none").isNull();
        assertThat(h.registry.inspect(key("lead"), 0).token()).isEqualTo(next);
    }

    /** Like a Release, a V settles the key first: at the lease end it is N (PROTOCOL.md 17.2). */
    @Test
    void theValueEndsWithTheLeaseAndAVAtTheLeaseEndIsNotHeld() {
        long t = token(acquireWithValue(h, "lead", 0, 5, 1, s1, "n1"));
        h.clock.advanceMillis(4_999);
        assertThat(set("lead", t, "n2")).isEqualTo(ValueResult.SET_CHANGED);
        h.clock.advanceMillis(1); // the lease end, before the timer got to it
        assertThat(set("lead", t, "n3")).isEqualTo(ValueResult.NOT_HELD);
        assertThat(shown("lead")).isNull();
        assertThat(h.registry.heldKeys()).isZero();
    }

    @Test
    void aKeyInLockDelayHasNoValue() {
        RegistryHarness delayed = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000,
                TimeUnit.SECONDS.toNanos(3), 8, 1000));
        long t = token(acquireWithValue(delayed, "lead", 0, 5, 1, s1, "n1"));
        delayed.tick(5_000 + TICK_MILLIS);
        KeyView v = delayed.registry.inspect(key("lead"), 0);
        assertThat(v.state()).isEqualTo(KeyView.State.DELAYED);
        assertThat(v.value()).isNull();
        assertThat(delayed.registry.setValue(key("lead"), t, new byte[] {1})).isEqualTo(ValueResult.NOT_HELD);
    }

    /** Hand-off: the next holder has its own M's value, never the previous one's (17.2 rule 1). */
    @Test
    void aQueuedMsValueIsShownNowhereUntilItsGrantAndNothingIsPassedOn() {
        long first = token(acquireWithValue(h, "lead", 0, 30, 1, s1, "n1"));
        Waiter second = waiter(acquireWithValue(h, "lead", 10_000, 30, 2, s2, "n2"));
        Waiter third = waiter(h.acquireMillis("lead", 10_000, 30, 3, s2));
        assertThat(shown("lead")).as("the queued M's value is not shown").isEqualTo("n1");
        h.release("lead", first);
        assertThat(h.takeAnswers()).containsExactly(second);
        assertThat(second.outcome()).isEqualTo(Waiter.Outcome.GRANTED);
        assertThat(shown("lead")).as("granted from the queue with its M's value").isEqualTo("n2");
        h.release("lead", second.token());
        assertThat(h.takeAnswers()).containsExactly(third);
        assertThat(shown("lead")).as("a grant from an M without a value has none").isNull();
        assertThat(h.registry.inspect(key("lead"), 0).token()).isEqualTo(third.token());
    }

    @Test
    void aHandOffAtTheLeaseEndDoesNotPassTheValueOn() {
        long first = token(acquireWithValue(h, "lead", 0, 5, 1, s1, "n1"));
        Waiter next = waiter(h.acquireMillis("lead", 30_000, 30, 2, s2));
        assertThat(set("lead", first, "n1b")).isEqualTo(ValueResult.SET_CHANGED);
        h.tick(5_000 + TICK_MILLIS);
        assertThat(h.takeAnswers()).containsExactly(next);
        assertThat(shown("lead")).isNull();
    }

    /** Cluster mode: the value travels with its grant decision, and every V is logged, N included. */
    @Test
    void theDecisionLogHearsTheGrantsValueAndEveryV() {
        List<String> logged = new ArrayList<>();
        DecisionLog log = new DecisionLog() {
            @Override
            public void granted(byte[] key, long token, int leaseSeconds, HoldMode mode, byte[] value) {
                logged.add("G " + token + " " + (value == null ? "-" : new String(value, UTF_8)));
            }

            @Override
            public void valueSet(byte[] key, long token, byte[] value) {
                logged.add("V " + token + " " + new String(value, UTF_8));
            }

            @Override
            public void released(byte[] key, long token) {
                logged.add("R " + token);
            }

            @Override
            public void extended(byte[] key, long token, int leaseSeconds) {
            }

            @Override
            public void expired(byte[] key, long token, int delaySeconds) {
            }

            @Override
            public void delayEnded(byte[] key, long token) {
            }

            @Override
            public void checked(byte[] key, long token) {
            }
        };
        ManualClock clock = new ManualClock();
        java.util.concurrent.atomic.AtomicLong tokens = new java.util.concurrent.atomic.AtomicLong(100);
        LockRegistry r = new LockRegistry(RegistryHarness.roomy(), clock, tokens::incrementAndGet, LeaseHorizon.UNBOUNDED,
                w -> { }, RegistryObserver.NONE, log);
        r.acquire(key("lead"), HoldMode.EXCLUSIVE, 0, 30, 1, clock.nanoTime(), s1, "n1".getBytes(UTF_8));
        r.acquire(key("plain"), HoldMode.EXCLUSIVE, 0, 30, 2, clock.nanoTime(), s1);
        r.setValue(key("lead"), 101, "n2".getBytes(UTF_8));
        r.setValue(key("lead"), 999, "x".getBytes(UTF_8));
        r.release(key("lead"), 101);
        assertThat(logged).containsExactly("G 101 n1", "G 102 -", "V 101 n2", "V 999 x", "R 101");
    }

    /** A new cluster leader installs each exclusive grant with its value (PROTOCOL.md 17.6). */
    @Test
    void aPromotedGrantKeepsItsValueUntilItEnds() {
        h.registry.promote(List.of(HeldGrant.exclusive(key("lead"), 41, 10, "n1".getBytes(UTF_8)),
                HeldGrant.exclusive(key("plain"), 42, 10)), 0);
        assertThat(shown("lead")).isEqualTo("n1");
        assertThat(shown("plain")).isNull();
        assertThat(set("lead", 41, "n2")).isEqualTo(ValueResult.SET_CHANGED);
        h.tick(10_000 + TICK_MILLIS);
        assertThat(shown("lead")).isNull();
    }
}
