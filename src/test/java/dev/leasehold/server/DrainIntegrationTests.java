package dev.leasehold.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * The graceful stop (PROTOCOL.md section 8, Drain) in-process: closing the Spring context
 * answers B to every queued Acquire on every session, closes every session after flushing, and
 * refuses new connections, well within leasehold.drain-timeout.
 */
class DrainIntegrationTests {

    @Test
    void everyQueuedAcquireGetsBThenEverySessionIsClosed() throws Exception {
        TestServer server = TestServer.start(Map.of("leasehold.drain-timeout", "5s"));
        List<RawClient> clients = new ArrayList<>();
        try {
            int port = server.port();
            RawClient holder = new RawClient(port);
            clients.add(holder);
            byte[] key = "drain/k".getBytes(UTF_8);
            holder.send(new Request.Acquire(0, 60, 1, key));
            assertThat(holder.next()).isInstanceOf(Answer.Acquired.class);

            Set<Long> owners = new HashSet<>();
            for (int s = 0; s < 3; s++) {
                RawClient c = new RawClient(port);
                clients.add(c);
                for (int i = 0; i < 4; i++) {
                    long owner = 100 + s * 10 + i;
                    owners.add(owner);
                    c.send(new Request.Acquire(60, 5, owner, key));
                }
                c.send(new Request.Ping(s));
                assertThat(c.next()).isEqualTo(new Answer.Pong(s)); // all four are queued by now
            }
            assertThat(server.bean(dev.leasehold.registry.LockRegistry.class).waiters()).isEqualTo(12);
            // A watch of the key (PROTOCOL.md 16.8): its session closes with the others, its watch ends.
            RawClient observer = new RawClient(port);
            clients.add(observer);
            assertThat(observer.send(new Request.Observe(1, key)).next()).isInstanceOf(Answer.Event.class);
            ServerStats stats = server.bean(ServerStats.class);
            assertThat(stats.openWatches()).isEqualTo(1);

            long start = System.nanoTime();
            CompletableFuture<Void> stopped = CompletableFuture.runAsync(server::close);

            Set<Long> busy = new HashSet<>();
            for (RawClient c : clients.subList(1, clients.size() - 1)) { // the waiters' sessions
                for (int i = 0; i < 4; i++) {
                    Answer a = c.next(3000);
                    assertThat(a).isInstanceOf(Answer.Busy.class);
                    busy.add(((Answer.Busy) a).owner());
                }
            }
            long bMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(busy).isEqualTo(owners);
            for (RawClient c : clients) {
                assertThat(c.closedByServer(3000)).as("session closed by the server").isTrue();
            }
            stopped.get(10, TimeUnit.SECONDS);
            assertThat(stats.openWatches()).as("the drain ended the watch").isZero();
            long stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(bMillis).as("B to every waiter").isLessThan(2000);
            assertThat(stopMillis).as("whole stop").isLessThan(5000);
            // No new sessions once drained.
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                s.setSoTimeout(1000);
                s.getOutputStream().write(new byte[] {'P', 0, 0, 0, 0, 0, 0, 0, 9, '\n'});
                assertThat(s.getInputStream().read()).as("no Pong from a stopped server").isEqualTo(-1);
            } catch (java.net.SocketException refused) {
                // refused: as expected
            }
        } finally {
            for (RawClient c : clients) {
                try {
                    c.close();
                } catch (IOException ignored) {
                    // already closed
                }
            }
            server.close();
        }
    }
}
