package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/** Busy at each limit, refused connections, and backpressure, against a server with small limits. */
class LimitsIntegrationTests {

    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of(
                "leasehold.max-waiters-per-key", "2",
                "leasehold.max-waiters-total", "4",
                "leasehold.max-pending-per-session", "3",
                "leasehold.max-held-keys", "10",
                "leasehold.max-connections", "40"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static long grant(RawClient c, String key) throws IOException {
        return ((Answer.Acquired) c.send(new Request.Acquire(0, 30, 1, Request.key(key))).next()).token();
    }

    /** Sends an Acquire and a Ping: a Pong first means the Acquire is queued; else its answer. */
    static Answer acquireAndSync(RawClient c, String key, long owner) throws IOException {
        c.send(new Request.Acquire(30, 30, owner, Request.key(key)), new Request.Ping(owner));
        Answer first = c.next();
        if (!(first instanceof Answer.Pong)) {
            assertThat(c.next()).isEqualTo(new Answer.Pong(owner));
        }
        return first;
    }

    @Test
    void busyWhenTheKeyQueueIsFull() throws IOException {
        try (RawClient h = new RawClient(server.port()); RawClient a = new RawClient(server.port());
                RawClient b = new RawClient(server.port())) {
            long t = grant(h, "lim/key");
            assertThat(acquireAndSync(a, "lim/key", 11)).isEqualTo(new Answer.Pong(11));
            assertThat(acquireAndSync(a, "lim/key", 12)).isEqualTo(new Answer.Pong(12));
            assertThat(acquireAndSync(b, "lim/key", 13)).isEqualTo(new Answer.Busy(13));
            h.send(new Request.Release(t, Request.key("lim/key"))).next();
            assertThat(a.next()).isInstanceOf(Answer.Acquired.class);
        }
    }

    @Test
    void busyWhenThisSessionHasTooManyWaiting() throws IOException {
        try (RawClient h = new RawClient(server.port()); RawClient a = new RawClient(server.port())) {
            grant(h, "lim/s1");
            grant(h, "lim/s2");
            assertThat(acquireAndSync(a, "lim/s1", 21)).isEqualTo(new Answer.Pong(21));
            assertThat(acquireAndSync(a, "lim/s1", 22)).isEqualTo(new Answer.Pong(22));
            assertThat(acquireAndSync(a, "lim/s2", 23)).isEqualTo(new Answer.Pong(23));
            assertThat(acquireAndSync(a, "lim/s2", 24)).isEqualTo(new Answer.Busy(24));
            // answered-at-once Acquires never count against the session
            assertThat(a.send(new Request.Acquire(0, 5, 25, Request.key("lim/s3"))).next())
                    .isInstanceOf(Answer.Acquired.class);
        }
    }

    @Test
    void busyWhenAllQueuesTogetherAreFull() throws IOException {
        try (RawClient h = new RawClient(server.port()); RawClient a = new RawClient(server.port());
                RawClient b = new RawClient(server.port()); RawClient c = new RawClient(server.port())) {
            grant(h, "lim/t1");
            grant(h, "lim/t2");
            grant(h, "lim/t3");
            assertThat(acquireAndSync(a, "lim/t1", 31)).isEqualTo(new Answer.Pong(31));
            assertThat(acquireAndSync(a, "lim/t2", 32)).isEqualTo(new Answer.Pong(32));
            assertThat(acquireAndSync(b, "lim/t3", 33)).isEqualTo(new Answer.Pong(33));
            assertThat(acquireAndSync(b, "lim/t1", 34)).isEqualTo(new Answer.Pong(34));
            assertThat(acquireAndSync(c, "lim/t2", 35)).isEqualTo(new Answer.Busy(35));
        }
    }

    @Test
    void busyWhenTooManyKeysAreHeld() throws IOException {
        TestServer small = TestServer.start(Map.of("leasehold.max-held-keys", "3"));
        try (RawClient c = new RawClient(small.port())) {
            grant(c, "h1");
            grant(c, "h2");
            long t3 = grant(c, "h3");
            assertThat(c.send(new Request.Acquire(5, 30, 44, Request.key("h4"))).next()).isEqualTo(new Answer.Busy(44));
            c.send(new Request.Release(t3, Request.key("h3"))).next();
            assertThat(c.send(new Request.Acquire(0, 30, 45, Request.key("h4"))).next()).isInstanceOf(Answer.Acquired.class);
        } finally {
            small.close();
        }
    }

    @Test
    void connectionsBeyondTheLimitAreClosedAtOnce() throws Exception {
        TestServer small = TestServer.start(Map.of("leasehold.max-connections", "3"));
        List<RawClient> open = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RawClient c = new RawClient(small.port());
                open.add(c);
                assertThat(c.send(new Request.Ping(i)).next()).isEqualTo(new Answer.Pong(i));
            }
            try (RawClient refused = new RawClient(small.port())) {
                assertThat(refused.closedByServer(3000)).isTrue();
            }
            open.remove(0).close();
            // the server counts the closed connection out when it sees the close: until then a
            // new one is refused (closed unanswered), so try until one is answered
            // 15 s, was 5 s: each try is a connection and a 1 s poll, and the server sees the close on a busy event loop.
            Wait.until("a new connection to the server (port " + small.port() + ") answered once one of 3 closed",
                    Duration.ofSeconds(15), () -> {
                        try (RawClient again = new RawClient(small.port())) {
                            return again.send(new Request.Ping(7)).poll(1000); // null: no answer in 1 s
                        }
                    }, new Answer.Pong(7)::equals);
        } finally {
            for (RawClient c : open) {
                c.close();
            }
            small.close();
        }
    }

    /**
     * A client that writes requests and never reads its answers: the server must stop reading it
     * (its outbound buffer is bounded) instead of buffering answers without limit. Then our
     * writes block once the socket buffers fill, long before gigabytes are written.
     */
    @Test
    void aSessionThatDoesNotReadIsNoLongerRead() throws Exception {
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (RawClient c = new RawClient(server.port())) {
            c.socket().setReceiveBufferSize(64 * 1024);
            byte[] pings = new byte[10 * 64 * 1024];
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(pings);
            while (buf.remaining() >= 10) {
                FrameWriter.write(new Request.Ping(42), buf);
            }
            long[] written = {0};
            Future<?> flood = writer.submit(() -> {
                OutputStream out = c.socket().getOutputStream();
                for (int i = 0; i < 2000; i++) { // at most ~1.3 GB: far beyond any socket buffers
                    out.write(pings, 0, buf.position());
                    written[0] += buf.position();
                }
                return null;
            });
            assertThat(org.junit.jupiter.api.Assertions.assertThrows(TimeoutException.class,
                    () -> flood.get(5, TimeUnit.SECONDS))).isNotNull();
            assertThat(written[0]).as("bytes accepted before the server stopped reading")
                    .isLessThan(200L * 1024 * 1024);
            // it is still a healthy session: reading the answers lets it continue
            for (int i = 0; i < 1000; i++) {
                assertThat(c.next()).isEqualTo(new Answer.Pong(42));
            }
        } finally {
            writer.shutdownNow();
        }
        try (RawClient other = new RawClient(server.port())) {
            assertThat(other.send(new Request.Ping(1)).next()).isEqualTo(new Answer.Pong(1));
        }
    }
}
