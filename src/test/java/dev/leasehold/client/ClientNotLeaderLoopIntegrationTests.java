package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerWriter;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.Wire;
import dev.leasehold.protocol.RequestReader;

/**
 * Client mechanics (PROTOCOL.md 9.12): an Acquire is resent after every {@code X 8} until its
 * deadline, so two nodes that name each other as the leader (stale hints while an election runs)
 * must not make it a hot loop. Two scripted followers answer the opening Hello (or Ping) and then every
 * Acquire with {@code X 8 leader=<the other>}; the real cluster never does this for long, which is
 * why they are scripted. The semantics against real nodes are in
 * {@code ClientClusterFaultIntegrationTests}.
 */
class ClientNotLeaderLoopIntegrationTests {

    /** A node that is up (answers Ping and Hello) and names {@code other} as the leader on any lock request. */
    private static final class NamingFollower implements AutoCloseable {
        final ServerSocket listener;
        final AtomicInteger connections = new AtomicInteger();
        final AtomicInteger acquires = new AtomicInteger();
        final List<Socket> sockets = new CopyOnWriteArrayList<>();
        volatile int otherPort;

        NamingFollower() throws IOException {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread t = new Thread(this::acceptLoop, "naming-follower-" + listener.getLocalPort());
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        private void acceptLoop() {
            while (!listener.isClosed()) {
                try {
                    Socket s = listener.accept();
                    connections.incrementAndGet();
                    sockets.add(s);
                    Thread t = new Thread(() -> serve(s), "naming-follower-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void serve(Socket s) {
            RequestReader reader = new RequestReader();
            byte[] buf = new byte[4096];
            try (s) {
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    ByteBuffer bytes = ByteBuffer.wrap(buf, 0, n);
                    Request r;
                    while ((r = reader.next(bytes)) != null) {
                        if (r instanceof Request.Ping p) {
                            out.write(AnswerWriter.encode(new Answer.Pong(p.nonce())));
                        } else if (r instanceof Request.Hello) {
                            // every node answers a Hello, followers too (PROTOCOL.md 14.1)
                            out.write(AnswerWriter.encode(new Answer.Hello(Wire.REVISION_1_4, 255_000, 0)));
                        } else {
                            if (r instanceof Request.Acquire || r instanceof Request.MilliAcquire) {
                                acquires.incrementAndGet();
                            }
                            out.write(AnswerWriter.encode(new Answer.Error(8, "leader=127.0.0.1:" + otherPort)));
                            return; // a follower closes the session after X 8
                        }
                    }
                }
            } catch (IOException | ProtocolException e) {
                // the client closed, or the test ended
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    private NamingFollower a;
    private NamingFollower b;
    private LeaseholdClient client;

    @AfterEach
    void tearDown() throws IOException {
        if (client != null) {
            client.close();
        }
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    @Test
    void twoNodesNamingEachOtherAreNoHotLoopAndTheAcquireEndsUnavailableAtItsDeadline() throws Exception {
        a = new NamingFollower();
        b = new NamingFollower();
        a.otherPort = b.port();
        b.otherPort = a.port();
        client = LeaseholdClient.create(ClientOptions.builder().poolSize(1).build(), "127.0.0.1:" + a.port());

        long start = System.nanoTime();
        AcquireOutcome o = client.acquire("loop", 2, 5);
        long ms = (System.nanoTime() - start) / 1_000_000;
        int resends = a.acquires.get() + b.acquires.get();
        System.out.printf("two nodes naming each other: %s after %d ms, %d Acquire frames, %d connections%n",
                o, ms, resends, a.connections.get() + b.connections.get());

        assertThat(o).as("no leader ever served: nothing was executed").isInstanceOf(AcquireOutcome.Unavailable.class);
        assertThat(ms).as("it kept looking until D (2 s)").isGreaterThanOrEqualTo(1_900L);
        assertThat(resends).as("resent after X 8, more than once").isGreaterThan(2);
        // Every third named leader in a row waits 250 ms: about 3 hops per 250 ms, ~25 in 2 s.
        // Without that back-off this loop ran at loopback speed (thousands of connections).
        assertThat(resends).as("no hot loop between two nodes naming each other").isLessThanOrEqualTo(100);
    }
}
