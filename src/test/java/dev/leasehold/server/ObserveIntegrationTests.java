package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * Observe (PROTOCOL.md section 16) on a single node, over real sockets, frames written by hand
 * with the codec: the first event for each state, each cause (grant, release, expiry, hand-off,
 * a batch of readers), tokens that never go back, {@code U}, {@code B} at the per-session limit
 * ({@code leasehold.max-watches-per-session} 2 here) and {@code X 3} on an id still open.
 */
class ObserveIntegrationTests {

    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("leasehold.max-watches-per-session", "2"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static Answer.Event event(long watch, int state, int cause, long token, int count, int limit) {
        return new Answer.Event(watch, state, cause, 0, token, count, limit, new byte[0]);
    }

    static long acquire(RawClient c, String key, long owner, int lease) throws Exception {
        return ((Answer.Acquired) c.send(new Request.Acquire(0, lease, owner, Request.key(key))).next()).token();
    }

    @Test
    void grantAndReleaseOfAFreeKeyAreOneEventEachWithTheirCauseAndTheTokenStays() throws Exception {
        byte[] key = Request.key("o/basic");
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port())) {
            assertThat(observer.send(new Request.Observe(5, key)).next())
                    .as("first event: free, no token known, cause 0").isEqualTo(event(5, 'F', 0, 0, 0, 0));
            long t = acquire(holder, "o/basic", 1, 30);
            assertThat(observer.next()).isEqualTo(event(5, 'H', 1, t, 1, 0));
            assertThat(holder.send(new Request.Release(t, key)).next()).isEqualTo(new Answer.Released(t));
            assertThat(observer.next()).as("released: F, cause 2, the token stays")
                    .isEqualTo(event(5, 'F', 2, t, 0, 0));
            // Extend and Check change nothing an event shows: no event.
            long t2 = acquire(holder, "o/basic", 2, 30);
            assertThat(observer.next()).isEqualTo(event(5, 'H', 1, t2, 1, 0));
            holder.send(new Request.Extend(60, t2, key), new Request.Check(t2, key));
            assertThat(holder.next()).isEqualTo(new Answer.Extended(t2));
            assertThat(holder.next()).isEqualTo(new Answer.Current(t2));
            assertThat(observer.poll(200)).as("no event for Extend or Check").isNull();
            holder.send(new Request.Release(t2, key)).next();
            assertThat(observer.next()).isEqualTo(event(5, 'F', 2, t2, 0, 0));
        }
    }

    /** PROTOCOL.md 16.9 and 17.2 rule 4: a grant's value in its H events; a V that changes it is cause 5. */
    @Test
    void theHoldersValueIsInItsEventsAndAVThatChangesItIsAnEventWithCauseFive() throws Exception {
        byte[] key = Request.key("o/value");
        byte[] n1 = Request.key("n1");
        byte[] n2 = Request.key("n2");
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port())) {
            observer.send(new Request.Observe(5, key)).next();
            long t = ((Answer.Acquired) holder.send(new Request.MilliAcquire(0, 0, 30, 1, 0, n1, key)).next()).token();
            assertThat(observer.next()).isEqualTo(new Answer.Event(5, 'H', 1, 0, t, 1, 0, n1));
            assertThat(holder.send(new Request.SetValue(t, n2, key)).next()).isEqualTo(new Answer.ValueSet(t));
            assertThat(observer.next()).isEqualTo(new Answer.Event(5, 'H', 5, 0, t, 1, 0, n2));
            assertThat(holder.send(new Request.SetValue(t, n2, key)).next()).isEqualTo(new Answer.ValueSet(t));
            assertThat(observer.poll(200)).as("the value already set: no event").isNull();
            assertThat(observer.send(new Request.Observe(6, key)).next()).as("a first event shows the value")
                    .isEqualTo(new Answer.Event(6, 'H', 0, 0, t, 1, 0, n2));
            holder.send(new Request.Release(t, key)).next();
            java.util.List<Answer> released = java.util.List.of(observer.next(), observer.next());
            assertThat(released).containsExactlyInAnyOrder(event(5, 'F', 2, t, 0, 0), event(6, 'F', 2, t, 0, 0));
        }
    }

    @Test
    void theFirstEventOfAHeldKeyAndOfASharedKey() throws Exception {
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port())) {
            long t = acquire(holder, "o/first-held", 1, 30);
            assertThat(observer.send(new Request.Observe(1, Request.key("o/first-held"))).next())
                    .isEqualTo(event(1, 'H', 0, t, 1, 0));
            holder.send(new Request.SharedAcquire(0, 30, 2, 4, Request.key("o/first-shared")));
            long s1 = ((Answer.Acquired) holder.next()).token();
            holder.send(new Request.SharedAcquire(0, 30, 3, 4, Request.key("o/first-shared")));
            long s2 = ((Answer.Acquired) holder.next()).token();
            assertThat(observer.send(new Request.Observe(2, Request.key("o/first-shared"))).next())
                    .as("a semaphore of 4 with 2 slots in use, highest token").isEqualTo(event(2, 'S', 0, s2, 2, 4));
            holder.send(new Request.Release(s2, Request.key("o/first-shared"))).next();
            assertThat(observer.next()).as("the highest token stays with S even after its grant ended")
                    .isEqualTo(event(2, 'S', 2, s2, 1, 4));
            holder.send(new Request.Release(s1, Request.key("o/first-shared"))).next();
            assertThat(observer.next()).isEqualTo(event(2, 'F', 2, s2, 0, 0));
        }
    }

    @Test
    void aReleaseThatHandsTheKeyOnIsOneEventHToHWithCauseGrant() throws Exception {
        byte[] key = Request.key("o/handoff");
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port());
                RawClient waiter = new RawClient(server.port())) {
            long t = acquire(holder, "o/handoff", 1, 30);
            assertThat(observer.send(new Request.Observe(7, key)).next()).isEqualTo(event(7, 'H', 0, t, 1, 0));
            waiter.send(new Request.Acquire(10, 30, 2, key), new Request.Ping(9));
            assertThat(waiter.next()).isEqualTo(new Answer.Pong(9));
            assertThat(observer.poll(200)).as("queues are not observable").isNull();
            holder.send(new Request.Release(t, key)).next();
            long t2 = ((Answer.Acquired) waiter.next()).token();
            assertThat(observer.next()).as("H(t) -> H(t'), never via F").isEqualTo(event(7, 'H', 1, t2, 1, 0));
            assertThat(observer.poll(200)).isNull();
            waiter.send(new Request.Release(t2, key)).next();
            assertThat(observer.next()).isEqualTo(event(7, 'F', 2, t2, 0, 0));
        }
    }

    @Test
    void readersLetInByOneReleaseAreOneEventWithTheNewCountAndTheHighestNewToken() throws Exception {
        byte[] key = Request.key("o/readers");
        try (RawClient observer = new RawClient(server.port()); RawClient writer = new RawClient(server.port());
                RawClient readers = new RawClient(server.port())) {
            long w = acquire(writer, "o/readers", 1, 30);
            readers.send(new Request.SharedAcquire(10, 30, 2, 0, key), new Request.SharedAcquire(10, 30, 3, 0, key),
                    new Request.Ping(4));
            assertThat(readers.next()).isEqualTo(new Answer.Pong(4));
            assertThat(observer.send(new Request.Observe(3, key)).next()).isEqualTo(event(3, 'H', 0, w, 1, 0));
            writer.send(new Request.Release(w, key)).next();
            long r1 = ((Answer.Acquired) readers.next()).token();
            long r2 = ((Answer.Acquired) readers.next()).token();
            assertThat(observer.next()).as("one event, read lock (limit 0), count 2")
                    .isEqualTo(event(3, 'S', 1, Math.max(r1, r2), 2, 0));
            assertThat(observer.poll(200)).isNull();
            readers.send(new Request.Release(r1, key), new Request.Release(r2, key));
            readers.next();
            readers.next();
            assertThat(observer.next()).isEqualTo(event(3, 'S', 2, Math.max(r1, r2), 1, 0));
            assertThat(observer.next()).isEqualTo(event(3, 'F', 2, Math.max(r1, r2), 0, 0));
        }
    }

    @Test
    void aLeaseThatRunsOutWithoutLockDelayIsFreeWithCauseExpiry() throws Exception {
        byte[] key = Request.key("o/expiry");
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port())) {
            observer.send(new Request.Observe(1, key)).next();
            long t = acquire(holder, "o/expiry", 1, 1); // a 1 s lease: real time must pass
            assertThat(observer.next()).isEqualTo(event(1, 'H', 1, t, 1, 0));
            assertThat(observer.next(5000)).isEqualTo(event(1, 'F', 3, t, 0, 0));
        }
    }

    @Test
    void unobserveIsAnsweredAtOnceAlsoForAnUnknownIdAndIsTheWatchsLastFrame() throws Exception {
        byte[] key = Request.key("o/unobserve");
        try (RawClient observer = new RawClient(server.port()); RawClient holder = new RawClient(server.port())) {
            observer.send(new Request.Observe(11, key)).next();
            assertThat(observer.send(new Request.Unobserve(11)).next()).isEqualTo(new Answer.Unobserved(11));
            assertThat(observer.send(new Request.Unobserve(99)).next()).isEqualTo(new Answer.Unobserved(99));
            long t = acquire(holder, "o/unobserve", 1, 30);
            assertThat(observer.poll(300)).as("nothing after U").isNull();
            // The id is free again once its U is answered.
            assertThat(observer.send(new Request.Observe(11, key)).next()).isEqualTo(event(11, 'H', 0, t, 1, 0));
            holder.send(new Request.Release(t, key)).next();
        }
    }

    @Test
    void anObserveBeyondThePerSessionLimitIsBusyAndTheSessionStaysOpen() throws Exception {
        try (RawClient observer = new RawClient(server.port())) {
            observer.send(new Request.Observe(1, Request.key("o/limit/1"))).next();
            observer.send(new Request.Observe(2, Request.key("o/limit/2"))).next();
            assertThat(observer.send(new Request.Observe(3, Request.key("o/limit/3"))).next())
                    .isEqualTo(new Answer.Busy(3));
            assertThat(observer.send(new Request.Ping(8)).next()).isEqualTo(new Answer.Pong(8));
            observer.send(new Request.Unobserve(1)).next();
            assertThat(observer.send(new Request.Observe(3, Request.key("o/limit/3"))).next())
                    .isEqualTo(event(3, 'F', 0, 0, 0, 0));
        }
    }

    @Test
    void anObserveNamingAWatchStillOpenIsX3DecidedFromTheHeader() throws Exception {
        try (RawClient observer = new RawClient(server.port())) {
            observer.send(new Request.Observe(4, Request.key("o/dup"))).next();
            // The header alone decides: the key that follows is never read (an invalid one here).
            observer.sendHex("4F 00 00 00 00 00 00 00 04 FF 0A");
            Answer x = observer.next();
            assertThat(x).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) x).code()).isEqualTo(3);
            assertThat(((Answer.Error) x).message()).contains("watch 4");
            assertThat(observer.closedByServer(3000)).isTrue();
        }
    }

    @Test
    void anUnobserveWithoutItsTerminatorIsX6() throws Exception {
        try (RawClient observer = new RawClient(server.port())) {
            observer.sendHex("55 00 00 00 00 00 00 00 05 41");
            Answer x = observer.next();
            assertThat(x).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) x).code()).isEqualTo(6);
        }
    }
}
