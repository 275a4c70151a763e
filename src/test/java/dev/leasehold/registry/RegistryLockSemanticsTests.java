package dev.leasehold.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;
import dev.leasehold.testing.LockDriver;
import dev.leasehold.testing.LockSemanticsContract;

/**
 * The lock-semantics contract against the registry on a manual clock: waiting for a later answer
 * moves the clock one millisecond at a time and runs the timer, so every timed event is seen at
 * the exact millisecond it happens.
 */
class RegistryLockSemanticsTests implements LockSemanticsContract {

    private final RegistryHarness h = new RegistryHarness(RegistryHarness.roomy());
    private final Map<SessionHandle, Deque<Answer>> later = new IdentityHashMap<>();

    private final LockDriver driver = new LockDriver() {
        @Override
        public Conn open() {
            SessionHandle session = new SessionHandle();
            Deque<Answer> mine = new ArrayDeque<>();
            later.put(session, mine);
            return new Conn() {
                @Override
                public Answer call(Request r) {
                    Answer a = handle(r, session);
                    collect();
                    return a;
                }

                @Override
                public Answer await(long maxMillis) {
                    collect();
                    for (long waited = 0; mine.isEmpty() && waited < maxMillis; waited++) {
                        h.tick(1);
                        collect();
                    }
                    assertThat(mine).as("an answer within %d ms", maxMillis).isNotEmpty();
                    return mine.poll();
                }

                @Override
                public boolean nothingYet() {
                    collect();
                    return mine.isEmpty();
                }

                @Override
                public void close() {
                    h.registry.closeSession(session);
                    collect();
                }
            };
        }

        @Override
        public long nowMillis() {
            return h.clock.nanoTime() / 1_000_000;
        }

        @Override
        public long lateSlackMillis() {
            return 100;
        }

        @Override
        public void awaitWaiters(int n) {
            assertThat(h.registry.waiters()).isEqualTo(n);
        }

        @Override
        public void close() {
        }
    };

    @Override
    public LockDriver driver() {
        return driver;
    }

    /** No default: a new request type does not compile until the contract's registry driver serves it. */
    private Answer handle(Request r, SessionHandle session) {
        return switch (r.type()) {
            case ACQUIRE -> acquire((Request.Acquire) r, session);
            case RELEASE -> release((Request.Release) r);
            case EXTEND -> extend((Request.Extend) r);
            case CHECK -> check((Request.Check) r);
            case PING -> new Answer.Pong(((Request.Ping) r).nonce());
            case SHARED_ACQUIRE, MILLI_ACQUIRE -> anyAcquire((Request.Acquiring) r, session);
            case WITHDRAW -> {
                // No answer of its own: a withdrawn waiter's T comes through the notifier.
                Request.Withdraw w = (Request.Withdraw) r;
                h.registry.withdraw(w.key(), w.owner(), session);
                yield null;
            }
            case HELLO -> new Answer.Hello(Wire.REVISION_1_4, Wire.MIN_MAX_WAIT_MILLIS, 0);
            // Watches are tested by RegistryWatchTests and ObserveIntegrationTests.
            case OBSERVE, UNOBSERVE -> throw new IllegalArgumentException("not driven here: " + r);
            case SET_VALUE -> {
                Request.SetValue v = (Request.SetValue) r;
                yield h.registry.setValue(v.key(), v.token(), v.value()).isSet() ? new Answer.ValueSet(v.token())
                        : new Answer.NotHeld(v.token());
            }
        };
    }

    /** As {@link #acquire}, plus {@code L}: an {@code S} or an {@code M}, in its own mode. */
    private Answer anyAcquire(Request.Acquiring a, SessionHandle session) {
        AcquireResult result = h.registry.acquire(a.key(), a.mode(), a.waitMillis(), a.leaseSeconds(), a.owner(),
                h.clock.nanoTime(), session, a instanceof Request.MilliAcquire m ? m.value() : null);
        if (result instanceof AcquireResult.Granted g) {
            return new Answer.Acquired(a.owner(), g.token(), 0);
        }
        if (result instanceof AcquireResult.Queued) {
            return null;
        }
        if (result instanceof AcquireResult.LimitMismatch m) {
            return new Answer.LimitMismatch(a.owner(), m.limit());
        }
        return result instanceof AcquireResult.TimedOut ? new Answer.TimedOut(a.owner()) : new Answer.Busy(a.owner());
    }

    /** The answer due now, or null while queued. */
    private Answer acquire(Request.Acquire a, SessionHandle session) {
        AcquireResult result = h.registry.acquire(a.key(), HoldMode.EXCLUSIVE, a.waitMillis(), a.leaseSeconds(), a.owner(),
                h.clock.nanoTime(), session);
        if (result instanceof AcquireResult.Granted g) {
            return new Answer.Acquired(a.owner(), g.token(), 0);
        }
        if (result instanceof AcquireResult.Queued) {
            return null;
        }
        return result instanceof AcquireResult.TimedOut ? new Answer.TimedOut(a.owner()) : new Answer.Busy(a.owner());
    }

    private Answer release(Request.Release rel) {
        return h.registry.release(rel.key(), rel.token()) == ReleaseResult.RELEASED ? new Answer.Released(rel.token())
                : new Answer.NotHeld(rel.token());
    }

    private Answer extend(Request.Extend e) {
        return h.registry.extend(e.key(), e.token(), e.leaseSeconds()) == ExtendResult.EXTENDED
                ? new Answer.Extended(e.token()) : new Answer.NotHeld(e.token());
    }

    private Answer check(Request.Check c) {
        return h.registry.check(c.key(), c.token()) ? new Answer.Current(c.token()) : new Answer.NotHeld(c.token());
    }

    /** Routes the answers the registry owes to waiters to their sessions, as the notifier does. */
    private void collect() {
        for (Waiter w : h.takeAnswers()) {
            Answer a = switch (w.outcome()) {
                case GRANTED -> new Answer.Acquired(w.owner(), w.token(), w.queuedMillis());
                case TIMED_OUT -> new Answer.TimedOut(w.owner());
                case BUSY -> new Answer.Busy(w.owner());
                case WAITING, DROPPED -> null;
            };
            Deque<Answer> q = later.get(w.session());
            if (a != null && q != null) {
                q.add(a);
            }
        }
    }
}
