package dev.leasehold.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import dev.leasehold.protocol.HoldMode;
import dev.leasehold.testing.support.Seeds;

/**
 * Seeded random sequences of {@code A}, {@code S}, Release, Extend, Check, session closes and
 * time steps against a simple reference model of PROTOCOL.md section 13: a key's grants and queue
 * as plain lists. Answers at receipt (grant, {@code T}, {@code B} with its reason, {@code L}),
 * Release, Extend and Check are predicted exactly; a waiter's later answer is checked as allowed
 * (granted only as the head and only when compatible; {@code T} never early) and every time step
 * checks nothing owed was left undone (no grantable head still waiting, no wait overrun). After
 * every step: never exclusive and shared at once, never over the limit, one limit per key, tokens
 * strictly increasing, and inspect agrees with the model. The seed is printed; rerun with
 * {@code -Dleasehold.seed=N}.
 */
class SharedModelTests {

    static final String[] KEYS = {"a", "b", "c"};
    static final int[] LIMITS = {0, 0, 2, 3};
    static final long MS = 1_000_000L;
    /** The timer tick: every instant of the test is a multiple of it, so timers fire exactly on time. */
    static final long STEP = 5 * MS;
    static final int RUNS = 200;
    static final int OPS = 400;

    /** A grant or a shared slot in lock-delay, as the model knows it. */
    static final class Grant {
        final String key;
        final long token;
        final boolean shared;
        final int limit;
        long leaseEnd;
        /** Set when the lease ran out with lock-delay on: the slot (or key) is held until then. */
        long delayEnd = -1;

        Grant(String key, long token, boolean shared, int limit, long leaseEnd) {
            this.key = key;
            this.token = token;
            this.shared = shared;
            this.limit = limit;
            this.leaseEnd = leaseEnd;
        }

        boolean active() {
            return delayEnd < 0;
        }
    }

    /** A queued request. */
    record Pending(String key, boolean shared, int limit, long waitEnd, int lease, SessionHandle session, Waiter w) {
    }

    /** One run's model and the registry under test. */
    static final class Run {
        final RegistryLimits limits;
        final RegistryHarness h;
        final Random random;
        final String label;
        final Map<String, List<Grant>> grants = new HashMap<>();
        final Map<String, List<Pending>> queues = new HashMap<>();
        final Map<Waiter, Pending> pendingOf = new IdentityHashMap<>();
        final List<Grant> everGranted = new ArrayList<>();
        final List<SessionHandle> sessions = new ArrayList<>();
        long lastToken;
        long owner;
        int grantsSeen;
        int sharedGrantsSeen;
        int batchesSeen;

        Run(Random random, String label) {
            this.random = random;
            this.label = label;
            long delay = random.nextBoolean() ? 0 : 1_000_000_000L;
            this.limits = new RegistryLimits(4, 8, 3, 1000, delay, 4, 7);
            this.h = new RegistryHarness(limits);
            for (int i = 0; i < 3; i++) {
                sessions.add(new SessionHandle());
            }
            for (String k : KEYS) {
                grants.put(k, new ArrayList<>());
                queues.put(k, new ArrayList<>());
            }
        }

        long now() {
            return h.clock.nanoTime();
        }

        // ------------------------------------------------------------ the model's view

        /** Ends the model's leases and delays due at {@code now} (a lease is over at its end instant). */
        void expire(long now) {
            for (List<Grant> gs : grants.values()) {
                gs.removeIf(g -> {
                    if (g.active() && now >= g.leaseEnd) {
                        if (limits.lockDelayNanos() == 0) {
                            return true;
                        }
                        g.delayEnd = g.leaseEnd + limits.lockDelayNanos();
                    }
                    return !g.active() && now >= g.delayEnd;
                });
            }
        }

        /** The key's shared limit: from its shared slots and shared waiters, or -1. */
        int keyLimit(String key) {
            for (Grant g : grants.get(key)) {
                if (g.shared) {
                    return g.limit;
                }
            }
            for (Pending p : queues.get(key)) {
                if (p.shared()) {
                    return p.limit();
                }
            }
            return -1;
        }

        boolean exclusiveTaken(String key) {
            return grants.get(key).stream().anyMatch(g -> !g.shared);
        }

        long sharedSlots(String key) {
            return grants.get(key).stream().filter(g -> g.shared).count();
        }

        /** Could a request of this kind be granted on the key if it were at the head? */
        boolean compatible(String key, boolean shared, int limit) {
            if (shared) {
                return !exclusiveTaken(key) && sharedSlots(key) < HoldMode.ofLimit(limit).slots(limits.maxSharedPerKey());
            }
            return grants.get(key).isEmpty();
        }

        long sharedTotal() {
            long n = 0;
            for (String k : KEYS) {
                n += sharedSlots(k) + queues.get(k).stream().filter(Pending::shared).count();
            }
            return n;
        }

        int waitersTotal() {
            return queues.values().stream().mapToInt(List::size).sum();
        }

        long pendingOf(SessionHandle s) {
            return queues.values().stream().flatMap(List::stream).filter(p -> p.session() == s).count();
        }

        Grant find(String key, long token) {
            for (Grant g : grants.get(key)) {
                if (g.active() && g.token == token) {
                    return g;
                }
            }
            return null;
        }

        // ------------------------------------------------------------ one random step

        void step() {
            int op = random.nextInt(100);
            String key = KEYS[random.nextInt(KEYS.length)];
            SessionHandle session = sessions.get(random.nextInt(sessions.size()));
            if (op < 25) {
                acquire(key, session, false, 0);
            } else if (op < 55) {
                int limit = LIMITS[random.nextInt(LIMITS.length)];
                if (random.nextInt(4) != 0 && keyLimit(key) >= 0) {
                    limit = keyLimit(key); // mostly the key's own limit, sometimes a mismatch
                }
                acquire(key, session, true, limit);
            } else if (op < 68) {
                releaseExtendOrCheck(key, 0);
            } else if (op < 74) {
                releaseExtendOrCheck(key, 1);
            } else if (op < 78) {
                releaseExtendOrCheck(key, 2);
            } else if (op < 80) {
                closeSession(session);
            } else {
                advance(STEP * (1 + random.nextInt(random.nextInt(5) == 0 ? 400 : 40)));
            }
            checkInvariants();
        }

        void acquire(String key, SessionHandle session, boolean shared, int limit) {
            int wait = random.nextInt(4);
            int lease = 1 + random.nextInt(3);
            long o = ++owner;
            long now = now();
            AcquireResult r = shared
                    ? h.registry.acquire(RegistryHarness.key(key), HoldMode.ofLimit(limit), wait * 1000L, lease, o, now, session)
                    : h.registry.acquire(RegistryHarness.key(key), HoldMode.EXCLUSIVE, wait * 1000L, lease, o, now, session);
            List<Waiter> later = h.takeAnswers();
            assertThat(later).as("%s: an %s on %s answers no waiter", label, shared ? "S" : "A", key).isEmpty();
            String what = label + ": " + (shared ? "S limit " + limit : "A") + " wait " + wait + " on " + key
                    + " (grants " + describe(key) + ", queue " + queues.get(key).size() + ")";
            int keyLimit = keyLimit(key);
            if (shared && keyLimit >= 0 && keyLimit != limit) {
                assertThat(r).as(what).isEqualTo(new AcquireResult.LimitMismatch(keyLimit));
                return;
            }
            boolean grantable = queues.get(key).isEmpty() && compatible(key, shared, limit);
            AcquireResult expected;
            if (grantable) {
                expected = shared && sharedTotal() >= limits.maxSharedTotal()
                        ? new AcquireResult.Busy(BusyReason.SHARED_TOTAL) : null;
            } else if (wait == 0) {
                expected = AcquireResult.TIMED_OUT;
            } else if (shared && sharedTotal() >= limits.maxSharedTotal()) {
                expected = new AcquireResult.Busy(BusyReason.SHARED_TOTAL);
            } else if (queues.get(key).size() >= limits.maxWaitersPerKey()) {
                expected = new AcquireResult.Busy(BusyReason.KEY_QUEUE);
            } else if (waitersTotal() >= limits.maxWaitersTotal()) {
                expected = new AcquireResult.Busy(BusyReason.TOTAL_WAITERS);
            } else if (pendingOf(session) >= limits.maxPendingPerSession()) {
                expected = new AcquireResult.Busy(BusyReason.SESSION);
            } else {
                assertThat(r).as(what).isInstanceOf(AcquireResult.Queued.class);
                Waiter w = ((AcquireResult.Queued) r).waiter();
                Pending p = new Pending(key, shared, limit, now + wait * 1_000_000_000L, lease, session, w);
                queues.get(key).add(p);
                pendingOf.put(w, p);
                return;
            }
            if (expected != null) {
                assertThat(r).as(what).isEqualTo(expected);
                return;
            }
            assertThat(r).as(what).isInstanceOf(AcquireResult.Granted.class);
            granted(key, ((AcquireResult.Granted) r).token(), shared, limit, now + lease * 1_000_000_000L);
        }

        void granted(String key, long token, boolean shared, int limit, long leaseEnd) {
            assertThat(token).as("%s: tokens strictly increase", label).isGreaterThan(lastToken);
            lastToken = token;
            Grant g = new Grant(key, token, shared, limit, leaseEnd);
            grants.get(key).add(g);
            everGranted.add(g);
            grantsSeen++;
            if (shared) {
                sharedGrantsSeen++;
            }
        }

        /** {@code kind}: 0 Release, 1 Extend, 2 Check; of a token the key had, has or never had. */
        void releaseExtendOrCheck(String key, int kind) {
            long token;
            if (!everGranted.isEmpty() && random.nextInt(5) != 0) {
                Grant any = everGranted.get(everGranted.size() - 1 - random.nextInt(Math.min(8, everGranted.size())));
                token = any.token;
                if (random.nextInt(3) == 0) {
                    key = any.key; // mostly its own key
                } else {
                    key = any.key;
                }
                if (random.nextInt(10) == 0) {
                    key = KEYS[random.nextInt(KEYS.length)]; // sometimes another key
                }
            } else {
                token = random.nextInt(3);
            }
            Grant g = find(key, token);
            long now = now();
            switch (kind) {
                case 0 -> {
                    ReleaseResult r = h.registry.release(RegistryHarness.key(key), token);
                    assertThat(r).as("%s: release %d of %s", label, token, key)
                            .isEqualTo(g != null ? ReleaseResult.RELEASED : ReleaseResult.NOT_HELD);
                    if (g != null) {
                        grants.get(key).remove(g);
                    }
                    answered(now);
                }
                case 1 -> {
                    int lease = 1 + random.nextInt(3);
                    ExtendResult r = h.registry.extend(RegistryHarness.key(key), token, lease);
                    assertThat(r).as("%s: extend %d of %s", label, token, key)
                            .isEqualTo(g != null ? ExtendResult.EXTENDED : ExtendResult.NOT_HELD);
                    if (g != null) {
                        g.leaseEnd = Math.max(g.leaseEnd, now + lease * 1_000_000_000L);
                    }
                    assertThat(h.takeAnswers()).isEmpty();
                }
                default -> {
                    assertThat(h.registry.check(RegistryHarness.key(key), token)).as("%s: check %d of %s", label, token, key)
                            .isEqualTo(g != null);
                    assertThat(h.takeAnswers()).isEmpty();
                }
            }
        }

        void closeSession(SessionHandle session) {
            h.registry.closeSession(session);
            for (List<Pending> q : queues.values()) {
                q.removeIf(p -> {
                    if (p.session() == session) {
                        assertThat(p.w().outcome()).isEqualTo(Waiter.Outcome.DROPPED);
                        pendingOf.remove(p.w());
                        return true;
                    }
                    return false;
                });
            }
            sessions.remove(session);
            sessions.add(new SessionHandle());
            answered(now());
        }

        /** Moves time one timer tick at a time, checking what each tick answered. */
        void advance(long nanos) {
            for (long done = 0; done < nanos; done += STEP) {
                h.clock.advanceNanos(STEP);
                h.registry.advance();
                answered(now());
            }
        }

        /**
         * Checks the answers the registry owed waiters at {@code now} (in the order it decided
         * them), then that nothing owed is left: no head that could be granted still waits, no
         * wait ran out unanswered.
         */
        void answered(long now) {
            expire(now);
            List<Waiter> answers = h.takeAnswers();
            int grantedNow = 0;
            for (Waiter w : answers) {
                Pending p = pendingOf.remove(w);
                assertThat(p).as("%s: an answer for a waiter the model knows", label).isNotNull();
                List<Pending> q = queues.get(p.key());
                String what = label + " at " + (now / MS) + " ms: waiter " + w.owner() + " on " + p.key();
                switch (w.outcome()) {
                    case GRANTED -> {
                        assertThat(q.indexOf(p)).as("%s granted as the head (FIFO)", what).isZero();
                        assertThat(p.waitEnd()).as("%s granted within its wait", what).isGreaterThanOrEqualTo(now);
                        assertThat(compatible(p.key(), p.shared(), p.limit())).as("%s compatible", what).isTrue();
                        granted(p.key(), w.token(), p.shared(), p.limit(), now + p.lease() * 1_000_000_000L);
                        grantedNow++;
                    }
                    case TIMED_OUT -> assertThat(now).as("%s: T never early", what).isGreaterThanOrEqualTo(p.waitEnd());
                    default -> throw new AssertionError(what + ": unexpected " + w.outcome());
                }
                q.remove(p);
            }
            if (grantedNow > 1) {
                batchesSeen++;
            }
            for (String k : KEYS) {
                List<Pending> q = queues.get(k);
                if (q.isEmpty()) {
                    continue;
                }
                Pending head = q.get(0);
                assertThat(head.waitEnd()).as("%s: the head of %s is answered by its wait's end", label, k)
                        .isGreaterThanOrEqualTo(now);
                if (head.waitEnd() > now) {
                    assertThat(compatible(k, head.shared(), head.limit()))
                            .as("%s at %d ms: the head of %s (%s) is grantable but still waits; grants %s", label,
                                    now / MS, k, head.shared() ? "S" : "A", describe(k))
                            .isFalse();
                }
            }
        }

        void checkInvariants() {
            for (String k : KEYS) {
                List<Grant> gs = grants.get(k);
                long exclusive = gs.stream().filter(g -> !g.shared).count();
                long shared = sharedSlots(k);
                assertThat(exclusive <= 1 && (exclusive == 0 || shared == 0))
                        .as("%s: never exclusive and shared at once on %s: %s", label, k, describe(k)).isTrue();
                int limit = keyLimit(k);
                if (shared > 0) {
                    assertThat(shared).as("%s: never over the limit on %s", label, k)
                            .isLessThanOrEqualTo(HoldMode.ofLimit(limit).slots(limits.maxSharedPerKey()));
                    assertThat(gs.stream().filter(g -> g.shared).allMatch(g -> g.limit == limit)
                            && queues.get(k).stream().filter(Pending::shared).allMatch(p -> p.limit() == limit))
                            .as("%s: one limit per key", label).isTrue();
                }
                KeyView v = h.registry.inspect(RegistryHarness.key(k), 10);
                List<Long> modelShared = gs.stream().filter(g -> g.shared && g.active()).map(g -> g.token).sorted().toList();
                assertThat(v.sharedHolders()).extracting(KeyView.SharedHolder::token).as("%s: inspect %s", label, k)
                        .containsExactlyElementsOf(modelShared);
                long modelExclusive = gs.stream().filter(g -> !g.shared && g.active()).mapToLong(g -> g.token).findFirst().orElse(0);
                assertThat(v.token()).as("%s: inspect %s exclusive", label, k).isEqualTo(modelExclusive);
                assertThat(v.waiters()).isEqualTo(queues.get(k).size());
            }
            assertThat((long) h.registry.sharedTotal()).as("%s: shared total", label).isEqualTo(sharedTotal());
        }

        String describe(String key) {
            StringBuilder b = new StringBuilder("[");
            for (Grant g : grants.get(key)) {
                b.append(g.shared ? "S" : "A").append(g.token).append(g.active() ? "" : "(delayed)").append(' ');
            }
            return b.append(']').toString();
        }
    }

    @Test
    void randomSequencesKeepEverySharedInvariant() {
        long seed = Seeds.seed("SharedModelTests");
        Random random = new Random(seed);
        long grants = 0;
        long shared = 0;
        long batches = 0;
        for (int run = 0; run < RUNS; run++) {
            Run r = new Run(new Random(random.nextLong()), "seed " + seed + " run " + run);
            for (int i = 0; i < OPS; i++) {
                r.step();
            }
            grants += r.grantsSeen;
            shared += r.sharedGrantsSeen;
            batches += r.batchesSeen;
        }
        System.out.println("SharedModelTests: " + RUNS + " runs x " + OPS + " operations, " + grants + " grants ("
                + shared + " shared), " + batches + " multi-grant decisions, 0 violations");
        assertThat(shared).as("the runs exercise shared grants").isGreaterThan(RUNS);
        assertThat(batches).as("the runs exercise batch grants").isPositive();
    }
}
