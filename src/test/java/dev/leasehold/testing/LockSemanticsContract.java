package dev.leasehold.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;

/**
 * The lock semantics of PROTOCOL.md sections 5 and 6, written once and run against every
 * {@link LockDriver}: the registry on a manual clock ({@code RegistryLockSemanticsTests}) and the
 * real server over sockets ({@code ServerLockSemanticsIntegrationTests}). A test here must hold
 * for both, so it speaks only the protocol: requests in, answers out, time on the driver's clock.
 */
public interface LockSemanticsContract {

    /** The driver under test; one per test class is fine, keys never repeat. */
    LockDriver driver();

    AtomicLong NEXT = new AtomicLong(1);

    private static String newKey() {
        return "contract/" + NEXT.getAndIncrement();
    }

    private static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }

    private static Request.Acquire acquire(String key, int wait, int lease) {
        return new Request.Acquire(wait, lease, NEXT.getAndIncrement(), key(key));
    }

    private static long grant(LockDriver.Conn c, String key, int lease) throws Exception {
        Answer a = c.call(acquire(key, 0, lease));
        assertThat(a).isInstanceOf(Answer.Acquired.class);
        return ((Answer.Acquired) a).token();
    }

    private static Request.SharedAcquire shared(String key, int wait, int lease, int limit) {
        return new Request.SharedAcquire(wait, lease, NEXT.getAndIncrement(), limit, key(key));
    }

    // ---------------------------------------------------------------- shared holds (section 13)

    @Test
    default void readersShareAWriterWaitsForThemAndReadersBehindItWaitForTheWriter() throws Exception {
        String key = newKey();
        try (LockDriver.Conn r1 = driver().open(); LockDriver.Conn r2 = driver().open();
                LockDriver.Conn writer = driver().open(); LockDriver.Conn late1 = driver().open();
                LockDriver.Conn late2 = driver().open()) {
            Answer.Acquired a1 = (Answer.Acquired) r1.call(shared(key, 0, 30, 0));
            Answer.Acquired a2 = (Answer.Acquired) r2.call(shared(key, 0, 30, 0));
            assertThat(a2.token()).isGreaterThan(a1.token());
            Request.Acquire w = acquire(key, 30, 30);
            assertThat(writer.call(w)).as("the writer waits for the readers").isNull();
            Request.SharedAcquire l1 = shared(key, 30, 30, 0);
            Request.SharedAcquire l2 = shared(key, 30, 30, 0);
            assertThat(late1.call(l1)).as("a reader never overtakes a waiting writer").isNull();
            assertThat(late2.call(l2)).isNull();
            assertThat(r1.call(new Request.Release(a1.token(), key(key)))).isEqualTo(new Answer.Released(a1.token()));
            assertThat(writer.nothingYet()).as("one reader still holds").isTrue();
            assertThat(r2.call(new Request.Release(a2.token(), key(key)))).isEqualTo(new Answer.Released(a2.token()));
            Answer.Acquired wg = (Answer.Acquired) writer.await(1000);
            assertThat(wg.owner()).isEqualTo(w.owner());
            assertThat(wg.token()).isGreaterThan(a2.token());
            assertThat(late1.nothingYet()).isTrue();
            assertThat(writer.call(new Request.Release(wg.token(), key(key)))).isEqualTo(new Answer.Released(wg.token()));
            Answer.Acquired g1 = (Answer.Acquired) late1.await(1000);
            Answer.Acquired g2 = (Answer.Acquired) late2.await(1000);
            assertThat(g1.owner()).isEqualTo(l1.owner());
            assertThat(g2.token()).as("one decision, tokens in queue order").isGreaterThan(g1.token());
            assertThat(g1.token()).isGreaterThan(wg.token());
            assertThat(late1.call(new Request.Check(g1.token(), key(key)))).isEqualTo(new Answer.Current(g1.token()));
            late1.call(new Request.Release(g1.token(), key(key)));
            late2.call(new Request.Release(g2.token(), key(key)));
        }
    }

    @Test
    default void aSharedAcquireWithAnotherLimitGetsLAndTheSessionStaysOpen() throws Exception {
        String key = newKey();
        try (LockDriver.Conn c = driver().open()) {
            Answer.Acquired p = (Answer.Acquired) c.call(shared(key, 0, 30, 2));
            Request.SharedAcquire other = shared(key, 0, 30, 3);
            assertThat(c.call(other)).isEqualTo(new Answer.LimitMismatch(other.owner(), 2));
            Request.SharedAcquire read = shared(key, 10, 30, 0);
            assertThat(c.call(read)).as("0 is a limit of its own").isEqualTo(new Answer.LimitMismatch(read.owner(), 2));
            assertThat(c.call(new Request.Ping(77))).as("still open").isEqualTo(new Answer.Pong(77));
            Answer.Acquired q = (Answer.Acquired) c.call(shared(key, 0, 30, 2));
            Request.SharedAcquire third = shared(key, 0, 30, 2);
            assertThat(c.call(third)).as("two permits taken").isEqualTo(new Answer.TimedOut(third.owner()));
            c.call(new Request.Release(p.token(), key(key)));
            c.call(new Request.Release(q.token(), key(key)));
        }
    }

    @Test
    default void aPermitsLeaseEndGrantsExactlyOneWaiter() throws Exception {
        String key = newKey();
        try (LockDriver.Conn holder = driver().open(); LockDriver.Conn w1 = driver().open();
                LockDriver.Conn w2 = driver().open()) {
            long start = driver().nowMillis();
            Answer.Acquired shortOne = (Answer.Acquired) holder.call(shared(key, 0, 1, 2));
            Answer.Acquired longOne = (Answer.Acquired) holder.call(shared(key, 0, 30, 2));
            Request.SharedAcquire a = shared(key, 10, 30, 2);
            assertThat(w1.call(a)).isNull();
            assertThat(w2.call(shared(key, 10, 30, 2))).isNull();
            Answer.Acquired g = (Answer.Acquired) w1.await(1000 + driver().lateSlackMillis());
            assertThat(driver().nowMillis() - start).as("the 1 s lease never ends early").isGreaterThanOrEqualTo(1000);
            assertThat(g.owner()).isEqualTo(a.owner());
            assertThat(g.token()).isGreaterThan(longOne.token());
            assertThat(w2.nothingYet()).as("exactly one slot was freed").isTrue();
            assertThat(holder.call(new Request.Check(shortOne.token(), key(key)))).isEqualTo(new Answer.NotHeld(shortOne.token()));
            assertThat(holder.call(new Request.Check(longOne.token(), key(key)))).isEqualTo(new Answer.Current(longOne.token()));
            holder.call(new Request.Release(longOne.token(), key(key)));
            Answer.Acquired g2 = (Answer.Acquired) w2.await(1000);
            w1.call(new Request.Release(g.token(), key(key)));
            w2.call(new Request.Release(g2.token(), key(key)));
        }
    }

    @Test
    default void waitersAreGrantedInArrivalOrderWithNewTokens() throws Exception {
        String key = newKey();
        List<LockDriver.Conn> waiters = new ArrayList<>();
        List<Long> owners = new ArrayList<>();
        try (LockDriver.Conn holder = driver().open()) {
            long token = grant(holder, key, 30);
            for (int i = 0; i < 4; i++) {
                LockDriver.Conn w = driver().open();
                waiters.add(w);
                Request.Acquire a = acquire(key, 30, 30);
                owners.add(a.owner());
                assertThat(w.call(a)).as("queued").isNull();
            }
            assertThat(holder.call(new Request.Release(token, key(key)))).isEqualTo(new Answer.Released(token));
            long last = token;
            for (int i = 0; i < 4; i++) {
                Answer.Acquired g = (Answer.Acquired) waiters.get(i).await(1000);
                assertThat(g.owner()).isEqualTo(owners.get(i));
                assertThat(g.token()).isGreaterThan(last);
                last = g.token();
                for (int j = i + 1; j < 4; j++) {
                    assertThat(waiters.get(j).nothingYet()).as("waiter %d still waits", j).isTrue();
                }
                assertThat(waiters.get(i).call(new Request.Release(g.token(), key(key))))
                        .isEqualTo(new Answer.Released(g.token()));
            }
        } finally {
            for (LockDriver.Conn w : waiters) {
                w.close();
            }
        }
    }

    @Test
    default void aLeaseNeverEndsEarlyAndThenGoesToTheHeadWaiter() throws Exception {
        String key = newKey();
        try (LockDriver.Conn holder = driver().open(); LockDriver.Conn waiter = driver().open()) {
            long start = driver().nowMillis();
            long token = grant(holder, key, 1);
            Request.Acquire a = acquire(key, 10, 5);
            assertThat(waiter.call(a)).isNull();
            Answer.Acquired g = (Answer.Acquired) waiter.await(1000 + driver().lateSlackMillis());
            long elapsed = driver().nowMillis() - start;
            assertThat(elapsed).as("the 1 s lease never ends early").isGreaterThanOrEqualTo(1000);
            assertThat(elapsed).isLessThanOrEqualTo(1000 + driver().lateSlackMillis());
            assertThat(g.owner()).isEqualTo(a.owner());
            assertThat(g.token()).isGreaterThan(token);
            assertThat(g.queuedMs()).isBetween(900L, 1000 + driver().lateSlackMillis());
            // the old token is over: Release and Extend of it are not held
            assertThat(holder.call(new Request.Release(token, key(key)))).isEqualTo(new Answer.NotHeld(token));
            assertThat(holder.call(new Request.Extend(5, token, key(key)))).isEqualTo(new Answer.NotHeld(token));
            waiter.call(new Request.Release(g.token(), key(key)));
        }
    }

    @Test
    default void aWaitRunsOutNoEarlierThanItsWait() throws Exception {
        String key = newKey();
        try (LockDriver.Conn holder = driver().open(); LockDriver.Conn waiter = driver().open()) {
            long token = grant(holder, key, 30);
            Request.Acquire a = acquire(key, 1, 5);
            long start = driver().nowMillis();
            assertThat(waiter.call(a)).isNull();
            assertThat(waiter.await(1000 + driver().lateSlackMillis())).isEqualTo(new Answer.TimedOut(a.owner()));
            long elapsed = driver().nowMillis() - start;
            assertThat(elapsed).isBetween(1000L, 1000 + driver().lateSlackMillis());
            driver().awaitWaiters(0);
            holder.call(new Request.Release(token, key(key)));
        }
    }

    @Test
    default void waitZeroOnAHeldKeyTimesOutAtOnceAndNeverQueues() throws Exception {
        String key = newKey();
        try (LockDriver.Conn holder = driver().open(); LockDriver.Conn other = driver().open()) {
            long token = grant(holder, key, 30);
            Request.Acquire a = acquire(key, 0, 5);
            assertThat(other.call(a)).isEqualTo(new Answer.TimedOut(a.owner()));
            driver().awaitWaiters(0);
            holder.call(new Request.Release(token, key(key)));
        }
    }

    @Test
    default void waitersOfAClosedSessionAreDroppedAndNeverGranted() throws Exception {
        String key = newKey();
        try (LockDriver.Conn holder = driver().open(); LockDriver.Conn second = driver().open()) {
            long token = grant(holder, key, 30);
            LockDriver.Conn first = driver().open();
            assertThat(first.call(acquire(key, 30, 30))).isNull();
            Request.Acquire a2 = acquire(key, 30, 30);
            assertThat(second.call(a2)).isNull();
            driver().awaitWaiters(2);
            first.close();
            driver().awaitWaiters(1);
            holder.call(new Request.Release(token, key(key)));
            Answer.Acquired g = (Answer.Acquired) second.await(1000);
            assertThat(g.owner()).isEqualTo(a2.owner());
            second.call(new Request.Release(g.token(), key(key)));
        }
    }

    @Test
    default void theHoldersSessionClosingLeavesTheGrantUntilReleasedElsewhere() throws Exception {
        String key = newKey();
        long token;
        try (LockDriver.Conn holder = driver().open()) {
            token = grant(holder, key, 30);
        }
        try (LockDriver.Conn other = driver().open()) {
            assertThat(other.call(acquire(key, 0, 5))).isInstanceOf(Answer.TimedOut.class);
            assertThat(other.call(new Request.Release(token, key(key)))).isEqualTo(new Answer.Released(token));
            long next = grant(other, key, 5);
            other.call(new Request.Release(next, key(key)));
        }
    }

    @Test
    default void theSameOwnerAgainIsANewRequestNotARenewal() throws Exception {
        String key = newKey();
        try (LockDriver.Conn c = driver().open()) {
            Request.Acquire a = acquire(key, 0, 5);
            long token = ((Answer.Acquired) c.call(a)).token();
            assertThat(c.call(a)).isEqualTo(new Answer.TimedOut(a.owner()));
            assertThat(c.call(new Request.Release(token, key(key)))).isEqualTo(new Answer.Released(token));
        }
    }

    @Test
    default void extendNeverShortensALeaseAndNeedsTheActiveToken() throws Exception {
        String key = newKey();
        try (LockDriver.Conn holder = driver().open(); LockDriver.Conn waiter = driver().open()) {
            long start = driver().nowMillis();
            long token = grant(holder, key, 2);
            // max(current end, now + 1 s) is still the 2 s end
            assertThat(holder.call(new Request.Extend(1, token, key(key)))).isEqualTo(new Answer.Extended(token));
            assertThat(holder.call(new Request.Extend(1, token + 1, key(key)))).isEqualTo(new Answer.NotHeld(token + 1));
            assertThat(waiter.call(acquire(key, 10, 1))).isNull();
            Answer.Acquired g = (Answer.Acquired) waiter.await(2000 + driver().lateSlackMillis());
            assertThat(driver().nowMillis() - start).as("not shortened to 1 s").isGreaterThanOrEqualTo(2000);
            // a longer extension moves the end (1 s lease, extended to 2 s): the next waiter waits for it
            // Read before the Extend is sent: the server times the new end from its receipt, which
            // is after this, while the answer can come back tens of ms later on a loaded machine.
            long extendedAt = driver().nowMillis();
            assertThat(waiter.call(new Request.Extend(2, g.token(), key(key)))).isEqualTo(new Answer.Extended(g.token()));
            try (LockDriver.Conn third = driver().open()) {
                assertThat(third.call(acquire(key, 10, 5))).isNull();
                Answer.Acquired h = (Answer.Acquired) third.await(2000 + driver().lateSlackMillis());
                assertThat(driver().nowMillis() - extendedAt).isGreaterThanOrEqualTo(2000);
                third.call(new Request.Release(h.token(), key(key)));
            }
        }
    }

    @Test
    default void releaseNeedsTheActiveToken() throws Exception {
        String key = newKey();
        try (LockDriver.Conn c = driver().open()) {
            long token = grant(c, key, 30);
            assertThat(c.call(new Request.Release(token - 1, key(key)))).isEqualTo(new Answer.NotHeld(token - 1));
            assertThat(c.call(new Request.Release(token, key("other/" + key)))).isEqualTo(new Answer.NotHeld(token));
            assertThat(c.call(new Request.Release(token, key(key)))).isEqualTo(new Answer.Released(token));
            assertThat(c.call(new Request.Release(token, key(key)))).as("stale now").isEqualTo(new Answer.NotHeld(token));
            assertThat(c.call(new Request.Extend(5, token, key(key)))).isEqualTo(new Answer.NotHeld(token));
        }
    }

    /** PROTOCOL.md section 11: C for the active grant only, N after Release and after expiry; never a change. */
    @Test
    default void checkSaysCurrentForTheActiveGrantOnlyAndChangesNothing() throws Exception {
        String key = newKey();
        try (LockDriver.Conn c = driver().open(); LockDriver.Conn waiter = driver().open()) {
            long token = grant(c, key, 1);
            assertThat(c.call(new Request.Check(token, key(key)))).isEqualTo(new Answer.Current(token));
            assertThat(c.call(new Request.Check(token, key(key)))).as("a check changes nothing").isEqualTo(
                    new Answer.Current(token));
            assertThat(c.call(new Request.Check(token - 1, key(key)))).isEqualTo(new Answer.NotHeld(token - 1));
            assertThat(c.call(new Request.Check(token, key("other/" + key)))).isEqualTo(new Answer.NotHeld(token));
            assertThat(c.call(new Request.Check(0, key(key)))).isEqualTo(new Answer.NotHeld(0));
            // Expiry: the 1 s lease runs out and the waiter gets the key.
            Request.Acquire queued = acquire(key, 5, 30);
            assertThat(waiter.call(queued)).as("queued").isNull();
            Answer.Acquired next = (Answer.Acquired) waiter.await(1000 + driver().lateSlackMillis());
            assertThat(c.call(new Request.Check(token, key(key)))).as("expired").isEqualTo(new Answer.NotHeld(token));
            assertThat(c.call(new Request.Check(next.token(), key(key)))).isEqualTo(new Answer.Current(next.token()));
            // Release: N from then on.
            assertThat(waiter.call(new Request.Release(next.token(), key(key)))).isEqualTo(
                    new Answer.Released(next.token()));
            assertThat(c.call(new Request.Check(next.token(), key(key)))).as("released").isEqualTo(
                    new Answer.NotHeld(next.token()));
            assertThat(c.call(acquire(key, 0, 5))).as("the key is free: checks held nothing").isInstanceOf(
                    Answer.Acquired.class);
        }
    }

    private static Request.SetValue setValue(long token, String value, String key) {
        return new Request.SetValue(token, key(value), key(key));
    }

    /**
     * PROTOCOL.md 17.3: {@code V} answers {@code V} only for the key's active exclusive grant (one
     * made by an {@code M} with a value, held with or without a queue), the same value again
     * included, and {@code N} for every other token: on a FREE key, a wrong or 0 token, another key,
     * a released grant, a shared grant. 14.3: an {@code M} with a value is granted as an {@code A}.
     */
    @Test
    default void setValueAnswersVOnlyForTheActiveExclusiveGrant() throws Exception {
        String key = newKey();
        try (LockDriver.Conn c = driver().open(); LockDriver.Conn waiter = driver().open()) {
            assertThat(c.call(setValue(1, "x", key))).as("FREE").isEqualTo(new Answer.NotHeld(1));
            Answer granted = c.call(new Request.MilliAcquire(0, 0, 30, NEXT.getAndIncrement(), 0, key("n1"), key(key)));
            assertThat(granted).isInstanceOf(Answer.Acquired.class);
            long token = ((Answer.Acquired) granted).token();
            assertThat(c.call(setValue(token, "n2", key))).isEqualTo(new Answer.ValueSet(token));
            assertThat(c.call(setValue(token, "n2", key))).as("the same value: V").isEqualTo(new Answer.ValueSet(token));
            assertThat(c.call(setValue(token, "", key))).as("vlen 0 clears").isEqualTo(new Answer.ValueSet(token));
            assertThat(c.call(setValue(token - 1, "x", key))).isEqualTo(new Answer.NotHeld(token - 1));
            assertThat(c.call(setValue(0, "x", key))).isEqualTo(new Answer.NotHeld(0));
            assertThat(c.call(setValue(token, "x", "other/" + key))).isEqualTo(new Answer.NotHeld(token));
            Request.MilliAcquire queued = new Request.MilliAcquire(0, 5_000, 30, NEXT.getAndIncrement(), 0, key("w"),
                    key(key));
            assertThat(waiter.call(queued)).as("an M with a value queues as an A").isNull();
            assertThat(c.call(setValue(token, "n3", key))).as("QUEUED: the holder's still").isEqualTo(
                    new Answer.ValueSet(token));
            assertThat(c.call(new Request.Release(token, key(key)))).isEqualTo(new Answer.Released(token));
            Answer.Acquired next = (Answer.Acquired) waiter.await(1000);
            assertThat(next.owner()).isEqualTo(queued.owner());
            assertThat(c.call(setValue(token, "x", key))).as("released").isEqualTo(new Answer.NotHeld(token));
            assertThat(waiter.call(setValue(next.token(), "w2", key))).isEqualTo(new Answer.ValueSet(next.token()));
            String readKey = newKey();
            Answer.Acquired read = (Answer.Acquired) c.call(shared(readKey, 0, 30, 0));
            assertThat(c.call(setValue(read.token(), "x", readKey))).as("a shared grant").isEqualTo(
                    new Answer.NotHeld(read.token()));
            waiter.call(new Request.Release(next.token(), key(key)));
            c.call(new Request.Release(read.token(), key(readKey)));
        }
    }

    @Test
    default void tokensOnlyGrowAcrossKeys() throws Exception {
        try (LockDriver.Conn c = driver().open()) {
            long last = 0;
            String shared = newKey();
            for (int i = 0; i < 20; i++) {
                String key = i % 2 == 0 ? shared : newKey();
                long token = grant(c, key, 5);
                assertThat(token).isGreaterThan(last);
                last = token;
                c.call(new Request.Release(token, key(key)));
            }
        }
    }
}
