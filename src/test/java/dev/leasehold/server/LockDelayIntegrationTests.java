package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Lock-delay on the real server (PROTOCOL.md section 12, {@code leasehold.lock-delay=2s}): an
 * expired lease keeps the key from a queued waiter for the delay, a released one does not.
 */
class LockDelayIntegrationTests {

    private static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("leasehold.lock-delay", "2s"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /**
     * A watch sees the expiry into the delay ({@code D}, cause 3) and the delay's end: free (cause 4)
     * when nobody waits, the waiter's grant (cause 1) when one does (PROTOCOL.md 16.3.2). Real time
     * passes: a 1 s lease and the 2 s delay.
     */
    @Test
    void aWatchSeesTheExpiryIntoTheDelayAndItsEnd() throws Exception {
        byte[] idle = Request.key("delay/watched/idle");
        byte[] busy = Request.key("delay/watched/busy");
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port());
                RawClient waiter = new RawClient(server.port())) {
            long t1 = ((Answer.Acquired) holder.send(new Request.Acquire(0, 1, 1, idle)).next()).token();
            long t2 = ((Answer.Acquired) holder.send(new Request.Acquire(0, 1, 2, busy)).next()).token();
            waiter.send(new Request.Acquire(10, 30, 3, busy));
            assertThat(observer.send(new Request.Observe(1, idle)).next()).isEqualTo(event(1, 'H', 0, t1, 1));
            assertThat(observer.send(new Request.Observe(2, busy)).next()).isEqualTo(event(2, 'H', 0, t2, 1));
            java.util.List<Answer> events = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                events.add(observer.next(10_000));
            }
            long t3 = ((Answer.Acquired) waiter.next(10_000)).token();
            assertThat(events).as("per watch in order; the two watches interleave freely").containsExactlyInAnyOrder(
                    event(1, 'D', 3, t1, 0), event(1, 'F', 4, t1, 0), event(2, 'D', 3, t2, 0), event(2, 'H', 1, t3, 1));
            assertThat(events.indexOf(event(1, 'D', 3, t1, 0))).isLessThan(events.indexOf(event(1, 'F', 4, t1, 0)));
            assertThat(events.indexOf(event(2, 'D', 3, t2, 0))).isLessThan(events.indexOf(event(2, 'H', 1, t3, 1)));
        }
    }

    private static Answer.Event event(long watch, int state, int cause, long token, int count) {
        return new Answer.Event(watch, state, cause, 0, token, count, 0, new byte[0]);
    }

    @Test
    void anExpiredLeaseKeepsTheKeyFromAWaiterForTheDelay() throws Exception {
        byte[] key = Request.key("delay/expired");
        LockRegistry registry = server.bean(LockRegistry.class);
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            // Every bound below is timed from before the holder's Acquire is sent: the grant (and
            // so the lease's end at +1 s and the delay's end at +3 s) comes after this instant, so
            // a late test thread on a loaded machine only ever sees the window later, never earlier.
            long sent = System.nanoTime();
            holder.send(new Request.Acquire(0, 1, 1, key));
            long token = ((Answer.Acquired) holder.next()).token();
            waiter.send(new Request.Acquire(10, 5, 2, key));
            // The key is in lock-delay from the lease's end (1 s after the grant) to 3 s after it:
            // watch for it there rather than read it at one guessed moment.
            // Polling a gauge every 5 ms: nothing signals the state change. The deadline is the
            // window itself (the delay ends 3 s after the Acquire was sent), so it cannot be longer.
            Wait.until("the key in lock-delay (delayed keys) at some moment between the lease's end and 3 s after the"
                    + " Acquire was sent", Duration.ofMillis(Math.max(0, 3000 - millisSince(sent))), Duration.ofMillis(5),
                    registry::delayedKeys, n -> n == 1);
            assertThat(waiter.poll(Math.max(1, 2500 - millisSince(sent))))
                    .as("no grant before 2.5 s after the holder's Acquire was sent (lease 1 s + delay 2 s)").isNull();
            holder.send(new Request.Check(token, key));
            assertThat(holder.next()).isEqualTo(new Answer.NotHeld(token));
            Answer.Acquired a = (Answer.Acquired) waiter.next(10_000);
            assertThat(millisSince(sent)).as("lease 1 s + delay 2 s, timed from before the grant").isGreaterThanOrEqualTo(3000);
            // queued_ms runs from the waiter's receipt, which follows the holder's grant by a
            // loaded machine's scheduling delay: only its upper end is a property of the server.
            assertThat(a.queuedMs()).as("granted when the delay ended, not much later").isLessThan(3000L + 5000L);
            assertThat(registry.delayedKeys()).as("the delay ends in the decision that grants the waiter").isZero();
        }
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    @Test
    void aReleasedLeaseGoesToTheWaiterAtOnce() throws Exception {
        byte[] key = Request.key("delay/released");
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            holder.send(new Request.Acquire(0, 1, 1, key));
            long token = ((Answer.Acquired) holder.next()).token();
            waiter.send(new Request.Acquire(10, 5, 2, key));
            assertThat(waiter.poll(200)).isNull();
            holder.send(new Request.Release(token, key));
            assertThat(holder.next()).isEqualTo(new Answer.Released(token));
            assertThat(waiter.next(500)).isInstanceOf(Answer.Acquired.class);
        }
    }
}
