package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;

/**
 * A slow observer (PROTOCOL.md 16.4) on the real server: a raw socket observes one key and stops
 * reading while another session makes 10,000 changes to it. The server writes events only while
 * the session's output is below its 128 KB high-water mark, then keeps one event per watch, each
 * new one replacing the kept one: its buffered output stays under the mark plus one event, and it
 * keeps at most one event. Once the observer reads again it gets the kept event, flagged
 * coalesced, and that last event is the key's real state.
 */
class SlowObserverIntegrationTests {

    static final int CHANGES = 10_000;
    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void anObserverThatDoesNotReadGetsTheLatestStateFlaggedCoalescedAndTheServerKeepsOneEvent() throws Exception {
        byte[] key = Request.key("slow/observed");
        ServerStats stats = server.bean(ServerStats.class);
        Socket socket = new Socket();
        socket.setReceiveBufferSize(4096); // before connect: it sets the advertised window
        socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        try (RawClient observer = new RawClient(socket); RawClient changer = new RawClient(server.port())) {
            assertThat(observer.send(new Request.Observe(1, key)).next())
                    .isEqualTo(new Answer.Event(1, 'F', 0, 0, 0, 0, 0, new byte[0]));
            Channel channel = sessionOf(socket);
            // Loopback autotunes a send buffer to megabytes; a small fixed one is full after a few
            // KB, as any buffer is once a peer stops reading for long.
            channel.config().setOption(ChannelOption.SO_SNDBUF, 4096);
            SessionHandler handler = channel.pipeline().get(SessionHandler.class);
            long sentBefore = stats.eventsSent();
            long coalescedBefore = stats.eventsCoalesced();

            long last = 0;
            for (int i = 0; i < CHANGES / 2; i++) { // each round: a grant and a release, two changes
                last = ((Answer.Acquired) changer.send(new Request.Acquire(0, 30, i, key)).next()).token();
                assertThat(changer.send(new Request.Release(last, key)).next()).isEqualTo(new Answer.Released(last));
            }
            long finalToken = last;
            // Events leave the server in tasks after the changes' answers: wait until every change
            // is written or folded, but the one kept.
            Wait.until("every change written or folded", Duration.ofSeconds(20),
                    () -> stats.eventsSent() - sentBefore + stats.eventsCoalesced() - coalescedBefore,
                    n -> n >= CHANGES - 1);
            long pending = channel.unsafe().outboundBuffer().totalPendingWriteBytes();
            int kept = runOnLoop(channel, handler::keptWatchEvents);
            long sent = stats.eventsSent() - sentBefore;
            long coalesced = stats.eventsCoalesced() - coalescedBefore;
            System.out.printf("slow observer: %d changes, %d events written, %d folded, %d bytes buffered, %d kept%n",
                    CHANGES, sent, coalesced, pending, kept);
            assertThat(channel.isWritable()).as("the observer's output is above its high-water mark").isFalse();
            // Netty counts each buffered write with a 96-byte entry overhead.
            assertThat(pending).as("buffered output: under the mark plus one event")
                    .isLessThanOrEqualTo(128 * 1024 + 27 + 96);
            assertThat(kept).as("one kept event for the one watch").isEqualTo(1);
            assertThat(coalesced).as("most changes folded").isGreaterThan(CHANGES / 4);

            // The observer reads again: the events written, then the kept one, the key's real state.
            Answer.Event lastEvent = null;
            int received = 0;
            long previousToken = 0;
            long lastAt = System.nanoTime();
            long longestGapNanos = 0;
            // Generous gaps: after a long zero window, TCP may take a while (its persist timer
            // backs off) before the server's buffered events flow again.
            for (Answer a = observer.poll(10_000); a != null; a = received == sent + 1 ? observer.poll(500)
                    : observer.poll(10_000)) {
                long at = System.nanoTime();
                longestGapNanos = Math.max(longestGapNanos, at - lastAt);
                lastAt = at;
                Answer.Event e = (Answer.Event) a;
                assertThat(e.token()).as("tokens never go back").isGreaterThanOrEqualTo(previousToken);
                previousToken = e.token();
                lastEvent = e;
                received++;
            }
            System.out.printf("slow observer: %d events read after it read again, longest gap %d ms%n", received,
                    longestGapNanos / 1_000_000);
            assertThat(received).as("those written before, then the kept one").isEqualTo(sent + 1);
            assertThat(lastEvent).as("the latest state, flagged coalesced")
                    .isEqualTo(new Answer.Event(1, 'F', 2, Answer.Event.COALESCED, finalToken, 0, 0, new byte[0]));
        }
    }

    private static Channel sessionOf(Socket socket) {
        Wait.until("the server to register the observer's session", Duration.ofSeconds(10),
                () -> server.bean(LeaseholdServer.class).sessionChannels().stream()
                        .filter(c -> ((InetSocketAddress) c.remoteAddress()).getPort() == socket.getLocalPort()).count(),
                n -> n == 1);
        return server.bean(LeaseholdServer.class).sessionChannels().stream()
                .filter(c -> ((InetSocketAddress) c.remoteAddress()).getPort() == socket.getLocalPort()).findFirst()
                .orElseThrow();
    }

    private static <T> T runOnLoop(Channel channel, java.util.concurrent.Callable<T> read) throws Exception {
        return channel.eventLoop().submit(read).get();
    }
}
