package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerWriter;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * What only the real server over real sockets can show: the PROTOCOL.md examples byte for byte,
 * exact UTF-8 keys, pipelining and answer order on one session. The lock semantics (state
 * matrix, FIFO, lease and wait ends, session rules) are the shared contract, run against this
 * server by {@link ServerLockSemanticsIntegrationTests}. Each test uses its own keys, so tests
 * share one server and run in any order.
 */
class ServerIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();
    static final AtomicLong owners = new AtomicLong(1000);
    static final AtomicLong keys = new AtomicLong();

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

    static String hex(Answer a) {
        return HexFormat.ofDelimiter(" ").formatHex(AnswerWriter.encode(a));
    }
}
