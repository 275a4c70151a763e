package dev.leasehold.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import dev.leasehold.testing.support.Seeds;

/**
 * Seeded random operation sequences against a reference model of PROTOCOL.md sections 5 and 6:
 * mutual exclusion, Release/Extend answers, FIFO, T never early, tokens increasing, no grant to a
 * closed session, queued_ms. The seed is printed; rerun with {@code -Dleasehold.seed=N}.
 */
class RegistryFuzzTests {

    private static final String[] KEYS = {"a", "b", "c"};

    /** What the model believes about one key's grant. */
    private static final class Grant {
        long token;
        long leaseEnd;
        boolean released;

        boolean activeAt(long now) {
            return !released && now < leaseEnd;
        }
    }

    @Test
    void randomSequencesKeepEveryInvariant() {
        long seed = Seeds.seed("RegistryFuzzTests");
        Random random = new Random(seed);
        for (int run = 0; run < 200; run++) {
            runOnce(random, seed + "/" + run);
        }
    }

    private void runOnce(Random random, String label) {
        RegistryHarness h = new RegistryHarness(new RegistryLimits(3, 8, 4, 2));
        Map<String, Grant> grants = new HashMap<>();
        Map<String, List<Waiter>> queues = new HashMap<>();
        Map<Waiter, String> keyOf = new HashMap<>();
        List<SessionHandle> sessions = new ArrayList<>(List.of(new SessionHandle(), new SessionHandle(),
                new SessionHandle()));
        List<Long> issued = new ArrayList<>();
        long[] lastToken = {0};
        long owner = 0;

        for (int step = 0; step < 300; step++) {
            long releasedHandOff = 0;
            String releasedHandOffKey = null;
            boolean surpriseHandOffSeen = false;
            String key = KEYS[random.nextInt(KEYS.length)];
            long now = h.clock.nanoTime();
            int op = random.nextInt(10);
            if (op < 4) {
                int wait = random.nextInt(4);
                int lease = 1 + random.nextInt(3);
                SessionHandle s = sessions.get(random.nextInt(sessions.size()));
                AcquireResult r = h.acquire(key, wait, lease, ++owner, s);
                Grant g = grants.get(key);
                boolean queueEmpty = queues.getOrDefault(key, List.of()).isEmpty();
                if (r instanceof AcquireResult.Granted granted) {
                    assertThat(g == null || !g.activeAt(now)).as("%s mutual exclusion", label).isTrue();
                    assertThat(queueEmpty).as("%s no barging", label).isTrue();
                    recordGrant(grants, key, granted.token(), now, lease, lastToken, label);
                } else if (r instanceof AcquireResult.Queued q) {
                    assertThat(wait).isPositive();
                    queues.computeIfAbsent(key, k -> new ArrayList<>()).add(q.waiter());
                    keyOf.put(q.waiter(), key);
                } else if (r instanceof AcquireResult.TimedOut) {
                    assertThat(wait).as("%s T at once only for wait=0", label).isZero();
                    assertThat(g != null && g.activeAt(now) || !queueEmpty).as("%s T on a taken key", label).isTrue();
                }
            } else if (op < 6) {
                Grant g = grants.get(key);
                long token = g == null ? 1 + random.nextInt(5) : (random.nextInt(5) == 0 ? g.token + 1 : g.token);
                boolean expected = g != null && g.token == token && g.activeAt(now);
                ReleaseResult r = h.release(key, token);
                if (r == ReleaseResult.RELEASED && !expected) {
                    // The Release itself ended a lease that had run out and handed the key to the
                    // head waiter, whose (guessable) token it then named: legitimate, checked below.
                    releasedHandOff = token;
                    releasedHandOffKey = key;
                } else {
                    assertThat(r).as("%s release %s", label, key)
                            .isEqualTo(expected ? ReleaseResult.RELEASED : ReleaseResult.NOT_HELD);
                }
                if (expected) {
                    g.released = true;
                }
            } else if (op < 7) {
                Grant g = grants.get(key);
                if (g != null) {
                    int lease = 1 + random.nextInt(3);
                    boolean expected = g.activeAt(now);
                    ExtendResult r = h.extend(key, g.token, lease);
                    assertThat(r).as("%s extend", label).isEqualTo(expected ? ExtendResult.EXTENDED : ExtendResult.NOT_HELD);
                    if (expected) {
                        g.leaseEnd = Math.max(g.leaseEnd, now + TimeUnit.SECONDS.toNanos(lease));
                    }
                }
            } else if (op < 8) {
                SessionHandle s = sessions.remove(random.nextInt(sessions.size()));
                h.registry.closeSession(s);
                sessions.add(new SessionHandle());
            } else {
                h.tick(random.nextInt(1500));
            }
            now = h.clock.nanoTime();
            // waiters the registry dropped (closed sessions) leave the model's queues silently;
            // they never count for FIFO
            for (List<Waiter> q : queues.values()) {
                q.removeIf(w -> w.outcome() == Waiter.Outcome.DROPPED);
            }
            for (Waiter w : h.takeAnswers()) {
                String k = keyOf.get(w);
                List<Waiter> queue = queues.get(k);
                switch (w.outcome()) {
                    case GRANTED -> {
                        assertThat(queue.get(0)).as("%s FIFO on %s", label, k).isSameAs(w);
                        assertThat(w.session().isClosed()).as("%s no grant to the dead", label).isFalse();
                        Grant g = grants.get(k);
                        assertThat(g == null || !g.activeAt(now)).as("%s mutual exclusion on hand-off", label).isTrue();
                        assertThat(w.queuedMillis()).isEqualTo((now - w.receiptNanos()) / 1_000_000);
                        recordGrant(grants, k, w.token(), now, w.leaseSeconds(), lastToken, label);
                        if (k.equals(releasedHandOffKey) && w.token() == releasedHandOff) {
                            // Granted and released by the same op: the key may go on to the next
                            // waiter in this op too, so the grant ends here, before its answer.
                            grants.get(k).released = true;
                            surpriseHandOffSeen = true;
                        }
                    }
                    case TIMED_OUT -> assertThat(now - w.deadline).as("%s T never early (receipt %d, deadline %d, now %d, step %d op %d)",
                            label, w.receiptNanos(), w.deadline, now, step, op).isNotNegative();
                    default -> throw new AssertionError(label + " unexpected " + w.outcome());
                }
                queue.remove(w);
            }
            if (releasedHandOffKey != null) {
                assertThat(surpriseHandOffSeen).as("%s a surprise RELEASED must name the grant handed off in that op", label)
                        .isTrue();
            }
            int modelWaiters = queues.values().stream().mapToInt(List::size).sum();
            assertThat(h.registry.waiters()).as("%s waiter count", label).isEqualTo(modelWaiters);
            long modelHeld = grants.values().stream().filter(g -> g.activeAt(h.clock.nanoTime())).count();
            assertThat(h.registry.heldKeys()).as("%s held keys never below the truth", label)
                    .isGreaterThanOrEqualTo((int) modelHeld);
        }
        issued.clear();
    }

    private static void recordGrant(Map<String, Grant> grants, String key, long token, long now, int lease,
            long[] lastToken, String label) {
        assertThat(token).as("%s tokens strictly increase", label).isGreaterThan(lastToken[0]);
        lastToken[0] = token;
        Grant g = new Grant();
        g.token = token;
        g.leaseEnd = now + TimeUnit.SECONDS.toNanos(lease);
        grants.put(key, g);
    }
}
