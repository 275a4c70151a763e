package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * Revision 1.4's {@code H}, {@code M} and {@code W} (PROTOCOL.md sections 14 and 15) against the
 * real server over real sockets, with {@code leasehold.max-wait} set to 300 s and values off
 * ({@code leasehold.max-value-bytes} 0; values served: {@code ValuesIntegrationTests}): Hello reports both; a 200 ms {@code M} on a held key ends with {@code T} after 200 ms (and well
 * within the generous bound a loaded build machine needs); a {@code W} ends a queued {@code M} with
 * {@code T} at once and the next waiter gets the key when the holder releases; an {@code M} with a
 * value or too long a wait is {@code X 3}.
 */
class HelloMilliWithdrawIntegrationTests {

    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("leasehold.max-wait", "300s", "leasehold.max-value-bytes", "0"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void helloReportsRevision14TheMaxWaitAndValuesOff() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            assertThat(c.send(new Request.Hello(Wire.REVISION_1_4)).next())
                    .isEqualTo(new Answer.Hello(0x0104, 300_000, 0));
            // Any revision, any number of times, in order with Pongs: the server remembers nothing.
            c.send(new Request.Hello(0x0103), new Request.Ping(1), new Request.Hello(0x0200));
            assertThat(c.next()).isEqualTo(new Answer.Hello(0x0104, 300_000, 0));
            assertThat(c.next()).isEqualTo(new Answer.Pong(1));
            assertThat(c.next()).isEqualTo(new Answer.Hello(0x0104, 300_000, 0));
        }
    }

    @Test
    void aTwoHundredMillisecondMOnAHeldKeyEndsWithTAfterTwoHundredMilliseconds() throws Exception {
        byte[] key = Request.key("m/200ms");
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            long token = ((Answer.Acquired) holder.send(new Request.Acquire(0, 30, 1, key)).next()).token();
            long sent = System.nanoTime();
            waiter.send(Request.MilliAcquire.exclusive(200, 30, 2, key));
            Answer answer = waiter.next(5000);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            System.out.printf("M with wait_ms 200 against a held key: T after %d ms%n", millis);
            assertThat(answer).isEqualTo(new Answer.TimedOut(2));
            // No earlier than the wait (the server's receipt is after the send); the upper bound is
            // generous for a loaded build machine: the contract's own is 20 ms after the wait.
            assertThat(millis).isGreaterThanOrEqualTo(200).isLessThan(1500);
            assertThat(holder.send(new Request.Release(token, key)).next()).isEqualTo(new Answer.Released(token));
        }
    }

    @Test
    void aWithdrawEndsAQueuedMAtOnceAndTheNextWaiterGetsTheKeyAfterTheRelease() throws Exception {
        byte[] key = Request.key("w/queued");
        try (RawClient holder = new RawClient(server.port()); RawClient a = new RawClient(server.port());
                RawClient b = new RawClient(server.port())) {
            long token = ((Answer.Acquired) holder.send(new Request.Acquire(0, 30, 1, key)).next()).token();
            // a queues first (60 s), then b (60 s); the Pongs prove each M was read and queued
            a.send(Request.MilliAcquire.exclusive(60_000, 30, 2, key), new Request.Ping(2));
            assertThat(a.next()).isEqualTo(new Answer.Pong(2));
            b.send(Request.MilliAcquire.exclusive(60_000, 30, 3, key), new Request.Ping(3));
            assertThat(b.next()).isEqualTo(new Answer.Pong(3));

            long sent = System.nanoTime();
            a.send(new Request.Withdraw(2, key));
            assertThat(a.next(5000)).isEqualTo(new Answer.TimedOut(2));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            System.out.printf("W of a queued M: its T after %d ms%n", millis);
            assertThat(millis).as("at once, not after the 60 s wait").isLessThan(1500);
            // A W that matches nothing (answered already) has no answer: the Ping's Pong comes next.
            a.send(new Request.Withdraw(2, key), new Request.Ping(4));
            assertThat(a.next()).isEqualTo(new Answer.Pong(4));
            // Another session cannot withdraw b's waiter, even naming its owner.
            a.send(new Request.Withdraw(3, key), new Request.Ping(5));
            assertThat(a.next()).isEqualTo(new Answer.Pong(5));

            assertThat(holder.send(new Request.Release(token, key)).next()).isEqualTo(new Answer.Released(token));
            Answer granted = b.next(5000);
            assertThat(granted).isInstanceOf(Answer.Acquired.class);
            assertThat(((Answer.Acquired) granted).owner()).isEqualTo(3);
            assertThat(((Answer.Acquired) granted).token()).isGreaterThan(token);
            assertThat(a.poll(100)).as("nothing more for the withdrawn session").isNull();
        }
    }

    @Test
    void anMWithAValueWhileValuesAreOffIsX3AndClosesTheSession() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            c.send(new Request.MilliAcquire(0, 200, 30, 5, 0, new byte[] {'n', '1'}, Request.key("v")));
            Answer x = c.next(5000);
            assertThat(x).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) x).code()).isEqualTo(3);
            assertThat(((Answer.Error) x).message()).contains("leasehold.max-value-bytes");
            assertThat(c.closedByServer(3000)).isTrue();
        }
    }

    @Test
    void anMWaitingLongerThanMaxWaitIsX3NamingTheSetting() throws Exception {
        try (RawClient c = new RawClient(server.port())) {
            c.send(Request.MilliAcquire.exclusive(300_001, 30, 6, Request.key("too-long")));
            Answer x = c.next(5000);
            assertThat(x).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) x).code()).isEqualTo(3);
            assertThat(((Answer.Error) x).message()).contains("leasehold.max-wait").contains("300000");
        }
        try (RawClient c = new RawClient(server.port())) {
            Answer granted = c.send(Request.MilliAcquire.exclusive(300_000, 30, 7, Request.key("longest-wait"))).next();
            assertThat(granted).isInstanceOf(Answer.Acquired.class);
        }
    }

    /** A shared {@code M} is the {@code S} it stands for: readers share, a writer's {@code M} waits. */
    @Test
    void aSharedMIsAnS() throws Exception {
        byte[] key = Request.key("m/shared");
        try (RawClient c = new RawClient(server.port())) {
            assertThat(c.send(Request.MilliAcquire.shared(0, 30, 1, 0, key)).next()).isInstanceOf(Answer.Acquired.class);
            assertThat(c.send(new Request.SharedAcquire(0, 30, 2, 0, key)).next()).isInstanceOf(Answer.Acquired.class);
            assertThat(c.send(Request.MilliAcquire.shared(0, 30, 3, 4, key)).next())
                    .isEqualTo(new Answer.LimitMismatch(3, 0));
            assertThat(c.send(Request.MilliAcquire.exclusive(0, 30, 4, key)).next()).isEqualTo(new Answer.TimedOut(4));
        }
    }
}
