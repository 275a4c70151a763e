package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * The request × key state matrix, FIFO and session rules over real sockets against the real
 * server. Each test uses its own keys, so tests share one server and run in any order.
 */
class ServerIntegrationTests {

    static TestServer server;
    static final AtomicLong owners = new AtomicLong(1000);
    static final AtomicLong keys = new AtomicLong();

    @BeforeAll
    static void start() {
        server = TestServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static RawClient session() throws IOException {
        return new RawClient(server.port());
    }

    static String newKey() {
        return "it/" + keys.incrementAndGet();
    }

    static Request.Acquire acquire(String key, int wait, int lease) {
        return new Request.Acquire(wait, lease, owners.incrementAndGet(), Request.key(key));
    }

    static long grant(RawClient c, String key, int lease) throws IOException {
        Request.Acquire a = acquire(key, 0, lease);
        Answer answer = c.send(a).next();
        assertThat(answer).isInstanceOf(Answer.Acquired.class);
        assertThat(((Answer.Acquired) answer).owner()).isEqualTo(a.owner());
        return ((Answer.Acquired) answer).token();
    }

    @Test
    void answersThePingExampleByteForByte() throws IOException {
        try (RawClient c = session()) {
            c.sendHex("50 00 00 00 00 00 00 00 07 0A");
            assertThat(hex(c.next())).isEqualTo("50 00 00 00 00 00 00 00 07 0a");
        }
    }

    @Test
    void answersTheAcquireReleaseAndExtendExamples() throws IOException {
        try (RawClient c = session()) {
            // A key of its own per run, same layout as the example (owner full of 0x0A bytes).
            String key = "orders/" + keys.incrementAndGet();
            c.send(new Request.Acquire(10, 30, 0x0A0A0A0A0A0A0A0AL, Request.key(key)));
            Answer.Acquired a = (Answer.Acquired) c.next();
            assertThat(a.owner()).isEqualTo(0x0A0A0A0A0A0A0A0AL);
            assertThat(a.queuedMs()).isZero();
            assertThat(hex(a)).startsWith("41 0a 0a 0a 0a 0a 0a 0a 0a").endsWith("00 00 00 00 0a");
            c.send(new Request.Extend(60, a.token(), Request.key(key)));
            assertThat(c.next()).isEqualTo(new Answer.Extended(a.token()));
            c.send(new Request.Release(a.token(), Request.key(key)));
            assertThat(c.next()).isEqualTo(new Answer.Released(a.token()));
            c.send(new Request.Release(a.token(), Request.key(key)));
            assertThat(c.next()).isEqualTo(new Answer.NotHeld(a.token()));
        }
    }

    @Test
    void theCafeExampleUsesItsExactUtf8Bytes() throws IOException {
        try (RawClient c = session()) {
            String key = "café-" + keys.incrementAndGet();
            long token = grant(c, key, 5);
            // "cafe\u0301" is the same text to a human but other bytes: a different key
            assertThat(c.send(acquire(key.replace("é", "e\u0301"), 0, 5)).next()).isInstanceOf(Answer.Acquired.class);
            assertThat(c.send(acquire(key, 0, 5)).next()).isInstanceOf(Answer.TimedOut.class);
            c.send(new Request.Release(token, Request.key(key))).next();
        }
    }

    @Test
    void heldKeyWithWaitZeroTimesOutAtOnce() throws IOException {
        try (RawClient holder = session(); RawClient other = session()) {
            String key = newKey();
            grant(holder, key, 30);
            Request.Acquire a = acquire(key, 0, 5);
            assertThat(other.send(a).next(2000)).isEqualTo(new Answer.TimedOut(a.owner()));
        }
    }

    @Test
    void releaseHandsTheKeyToTheWaiterWithANewTokenAndItsQueuedTime() throws Exception {
        try (RawClient holder = session(); RawClient waiter = session()) {
            String key = newKey();
            long token = grant(holder, key, 30);
            Request.Acquire a = acquire(key, 10, 5);
            waiter.send(a);
            assertThat(waiter.poll(300)).as("queued, no answer yet").isNull();
            assertThat(holder.send(new Request.Release(token, Request.key(key))).next())
                    .isEqualTo(new Answer.Released(token));
            Answer.Acquired granted = (Answer.Acquired) waiter.next();
            assertThat(granted.owner()).isEqualTo(a.owner());
            assertThat(granted.token()).isGreaterThan(token);
            assertThat(granted.queuedMs()).isBetween(250L, 5000L);
        }
    }

    @Test
    void leaseEndHandsTheKeyToTheWaiterNeverEarly() throws Exception {
        try (RawClient holder = session(); RawClient waiter = session()) {
            String key = newKey();
            long start = System.nanoTime();
            grant(holder, key, 1);
            waiter.send(acquire(key, 10, 5));
            Answer.Acquired granted = (Answer.Acquired) waiter.next(8000);
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(elapsedMs).as("the 1 s lease never ends early").isGreaterThanOrEqualTo(1000);
            assertThat(granted.queuedMs()).isBetween(900L, 3000L);
            assertThat(holder.send(new Request.Extend(5, granted.token() - 1, Request.key(key))).next())
                    .isInstanceOf(Answer.NotHeld.class);
        }
    }

    @Test
    void waitRunsOutNoEarlierThanWait() throws Exception {
        try (RawClient holder = session(); RawClient waiter = session()) {
            String key = newKey();
            grant(holder, key, 30);
            Request.Acquire a = acquire(key, 1, 5);
            long start = System.nanoTime();
            waiter.send(a);
            assertThat(waiter.next(5000)).isEqualTo(new Answer.TimedOut(a.owner()));
            assertThat((System.nanoTime() - start) / 1_000_000).isBetween(1000L, 4000L);
        }
    }

    @Test
    void waitersAreGrantedInArrivalOrderAcrossSessions() throws Exception {
        String key = newKey();
        List<RawClient> waiters = new ArrayList<>();
        List<Long> ownersInOrder = new ArrayList<>();
        try (RawClient holder = session()) {
            long token = grant(holder, key, 30);
            for (int i = 0; i < 5; i++) {
                RawClient w = session();
                waiters.add(w);
                Request.Acquire a = acquire(key, 30, 30);
                ownersInOrder.add(a.owner());
                // a session's frames are handled in order: the Pong proves the Acquire is queued
                assertThat(w.send(a, new Request.Ping(i)).next()).isEqualTo(new Answer.Pong(i));
            }
            holder.send(new Request.Release(token, Request.key(key))).next();
            for (int i = 0; i < 5; i++) {
                Answer.Acquired g = (Answer.Acquired) waiters.get(i).next();
                assertThat(g.owner()).isEqualTo(ownersInOrder.get(i));
                for (int j = i + 1; j < 5; j++) {
                    assertThat(waiters.get(j).poll(50)).as("waiter %d must still wait", j).isNull();
                }
                waiters.get(i).send(new Request.Release(g.token(), Request.key(key))).next();
            }
        } finally {
            for (RawClient w : waiters) {
                w.close();
            }
        }
    }

    @Test
    void waitersOfAClosedSessionAreDroppedAndNeverGranted() throws Exception {
        try (RawClient holder = session(); RawClient first = session(); RawClient second = session()) {
            String key = newKey();
            long token = grant(holder, key, 30);
            assertThat(first.send(acquire(key, 30, 30), new Request.Ping(1)).next()).isEqualTo(new Answer.Pong(1));
            Request.Acquire a2 = acquire(key, 30, 30);
            assertThat(second.send(a2, new Request.Ping(2)).next()).isEqualTo(new Answer.Pong(2));
            first.close();
            Thread.sleep(200); // let the server see the close
            holder.send(new Request.Release(token, Request.key(key))).next();
            assertThat(((Answer.Acquired) second.next()).owner()).isEqualTo(a2.owner());
        }
    }

    @Test
    void holderSessionClosingLeavesTheGrantUntilReleasedElsewhere() throws Exception {
        String key = newKey();
        long token;
        try (RawClient holder = session()) {
            token = grant(holder, key, 30);
        }
        try (RawClient other = session()) {
            Thread.sleep(100);
            assertThat(other.send(acquire(key, 0, 5)).next()).isInstanceOf(Answer.TimedOut.class);
            assertThat(other.send(new Request.Release(token, Request.key(key))).next())
                    .isEqualTo(new Answer.Released(token));
            assertThat(other.send(acquire(key, 0, 5)).next()).isInstanceOf(Answer.Acquired.class);
        }
    }

    @Test
    void immediateAnswersAreNotHeldBackBehindAQueuedAcquireAndComeInOrder() throws Exception {
        try (RawClient holder = session(); RawClient c = session()) {
            String key = newKey();
            long token = grant(holder, key, 30);
            Request.Acquire queued = acquire(key, 30, 5);
            String free = newKey();
            Request.Acquire immediate = acquire(free, 0, 5);
            c.send(queued, new Request.Ping(1), immediate, new Request.Release(token + 99, Request.key(key)),
                    new Request.Ping(2));
            assertThat(c.next()).isEqualTo(new Answer.Pong(1));
            assertThat(((Answer.Acquired) c.next()).owner()).isEqualTo(immediate.owner());
            assertThat(c.next()).isEqualTo(new Answer.NotHeld(token + 99));
            assertThat(c.next()).isEqualTo(new Answer.Pong(2));
            holder.send(new Request.Release(token, Request.key(key))).next();
            assertThat(((Answer.Acquired) c.next()).owner()).isEqualTo(queued.owner());
        }
    }

    @Test
    void manyPipelinedRequestsInOneWriteAreAllAnswered() throws Exception {
        try (RawClient c = session()) {
            java.io.ByteArrayOutputStream batch = new java.io.ByteArrayOutputStream();
            List<Request.Acquire> acquires = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                Request.Acquire a = acquire(newKey(), 0, 5);
                acquires.add(a);
                batch.write(FrameWriter.encode(a));
            }
            c.sendBytes(batch.toByteArray());
            long lastToken = 0;
            for (Request.Acquire a : acquires) {
                Answer.Acquired g = (Answer.Acquired) c.next();
                assertThat(g.owner()).isEqualTo(a.owner());
                assertThat(g.token()).isGreaterThan(lastToken);
                lastToken = g.token();
            }
        }
    }

    @Test
    void sameKeyAndOwnerAgainIsANewRequestNotARenewal() throws Exception {
        try (RawClient c = session()) {
            String key = newKey();
            Request.Acquire a = acquire(key, 0, 5);
            long token = ((Answer.Acquired) c.send(a).next()).token();
            assertThat(c.send(a).next()).isEqualTo(new Answer.TimedOut(a.owner()));
            c.send(new Request.Release(token, Request.key(key))).next();
        }
    }

    static String hex(Answer a) {
        return HexFormat.ofDelimiter(" ").formatHex(FrameWriter.encode(a));
    }
}
