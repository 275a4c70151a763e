package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;

/**
 * Clients that do not read, over real sockets: backpressure must not turn into {@code X 5}, an
 * {@code X} must reach a client that reads (no reset), and a session decided closed must close
 * even if its client never reads.
 */
class SlowClientIntegrationTests {

    static final long FRAME_TIMEOUT_MS = 500;
    static TestServer server;
    static ServerStats stats;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("leasehold.frame-timeout", FRAME_TIMEOUT_MS + "ms"));
        stats = server.bean(ServerStats.class);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void clientThatStopsReadingForThreeFrameTimeoutsGetsEveryAnswerAndKeepsItsSession() throws Exception {
        int pings = 1_100_000; // 11 MB of requests, 11 MB of answers: far beyond every buffer on the way
        long x5Before = stats.protocolErrors(ErrorCode.INCOMPLETE_FRAME);
        try (Socket s = connect(0)) {
            OutputStream out = s.getOutputStream();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    byte[] chunk = new byte[10 * 6553]; // 65,530 bytes: frames cut at odd places by the reads
                    ByteBuffer b = ByteBuffer.wrap(chunk);
                    for (int i = 0; i < pings; i++) {
                        if (!b.hasRemaining()) {
                            out.write(chunk);
                            b.clear();
                        }
                        b.put(FrameWriter.encode(new Request.Ping(i)));
                    }
                    out.write(chunk, 0, b.position());
                    out.flush();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            // Real time must pass: the server's pause has to outlast the frame timeout (3x) while
            // the client neither reads nor can finish writing (the server stopped reading it).
            Thread.sleep(3 * FRAME_TIMEOUT_MS);
            assertThat(writer).as("the writer is blocked by backpressure").isNotDone();

            InputStream in = s.getInputStream();
            s.setSoTimeout(20_000);
            AnswerDecoder decoder = new AnswerDecoder();
            ByteBuffer buf = ByteBuffer.allocate(1 << 16).flip();
            byte[] chunk = new byte[1 << 16];
            long expected = 0;
            while (expected < pings) {
                Answer a = decoder.next(buf);
                if (a == null) {
                    int n = in.read(chunk);
                    if (n < 0) {
                        throw new EOFException("closed after " + expected + " answers");
                    }
                    buf.compact().put(chunk, 0, n).flip();
                    continue;
                }
                assertThat(a).as("answer %d", expected).isEqualTo(new Answer.Pong(expected));
                expected++;
            }
            writer.get(10, TimeUnit.SECONDS);
            out.write(FrameWriter.encode(new Request.Ping(-1)));
            out.flush();
            Answer last;
            while ((last = decoder.next(buf)) == null) {
                int n = in.read(chunk);
                assertThat(n).as("session still open").isPositive();
                buf.compact().put(chunk, 0, n).flip();
            }
            assertThat(last).isEqualTo(new Answer.Pong(-1));
        }
        assertThat(stats.protocolErrors(ErrorCode.INCOMPLETE_FRAME)).isEqualTo(x5Before);
    }

    @Test
    void errorAndEarlierAnswersReachAClientThatKeepsSendingNoReset() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < 1000; i++) {
            bytes.writeBytes(FrameWriter.encode(new Request.Ping(i)));
        }
        bytes.write(0x5A); // unknown op
        bytes.writeBytes(new byte[512 * 1024]); // and then more, which the server must not leave unread
        try (Socket s = connect(0)) {
            s.getOutputStream().write(bytes.toByteArray()); // returns once the server has taken it all
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            s.setSoTimeout(10_000);
            byte[] all = in.readAllBytes(); // to EOF; a reset would throw "Connection reset" here
            AnswerDecoder decoder = new AnswerDecoder();
            ByteBuffer buf = ByteBuffer.wrap(all);
            for (int i = 0; i < 1000; i++) {
                assertThat(decoder.next(buf)).isEqualTo(new Answer.Pong(i));
            }
            Answer x = decoder.next(buf);
            assertThat(x).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) x).code()).isEqualTo(ErrorCode.UNKNOWN_OP.code());
            assertThat(buf.hasRemaining()).isFalse();
        }
    }

    @Test
    void sessionDecidedClosedIsForceClosedWhenItsClientNeverReads() throws Exception {
        Wait.until("no session left on the server (port " + server.port() + ") from earlier tests", Duration.ofSeconds(10), stats::sessions, n -> n == 0);
        long x1Before = stats.protocolErrors(ErrorCode.UNKNOWN_OP);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < 8000; i++) { // 80 KB of answers: below the high-water mark, so the server reads on
            bytes.writeBytes(FrameWriter.encode(new Request.Ping(i)));
        }
        bytes.write(0xFF);
        try (Socket s = connect(4096)) {
            Wait.until("the server to register this session (its session channels)", Duration.ofSeconds(10),
                    () -> server.bean(LeaseholdServer.class).sessionChannels().size(), n -> n == 1);
            Channel session = server.bean(LeaseholdServer.class).sessionChannels().iterator().next();
            // Loopback autotunes a send buffer to megabytes, which would take all 80 KB; a fixed
            // small one is full after a few KB, as any buffer is once a peer stops reading for long.
            session.config().setOption(ChannelOption.SO_SNDBUF, 4096);
            s.getOutputStream().write(bytes.toByteArray());
            s.getOutputStream().flush();
            Wait.until("the server to count the unknown op (X 1 count, was " + x1Before + ")", Duration.ofSeconds(10),
                    () -> stats.protocolErrors(ErrorCode.UNKNOWN_OP), n -> n == x1Before + 1);
            long decided = System.nanoTime();
            assertThat(session.unsafe().outboundBuffer()).as("X not flushed yet").isNotNull();
            assertThat(session.unsafe().outboundBuffer().totalPendingWriteBytes()).as("X not flushed yet").isPositive();
            assertThat(stats.sessions()).as("decided, still open").isEqualTo(1);
            Wait.until("the server to force-close the non-reading session (sessions open)", Duration.ofMillis(FRAME_TIMEOUT_MS + 5000),
                    Duration.ofMillis(20), stats::sessions, n -> n == 0);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - decided);
            System.out.printf("force-closed %d ms after the X was decided (bound %d ms)%n", tookMs, FRAME_TIMEOUT_MS);
            assertThat(session.isOpen()).isFalse();
        }
    }

    @Test
    void sessionThatReadsItsErrorButNeverClosesIsClosedAfterTheBound() throws Exception {
        Wait.until("no session left on the server (port " + server.port() + ") from earlier tests", Duration.ofSeconds(10), stats::sessions, n -> n == 0);
        try (Socket s = connect(0)) {
            s.getOutputStream().write(new byte[] {0x5A});
            s.getOutputStream().flush();
            s.setSoTimeout(5000);
            byte[] all = s.getInputStream().readAllBytes(); // the server's FIN ends it
            assertThat(all[0]).isEqualTo((byte) 'X');
            // the client neither closes nor sends: the server closes after the bound
            Wait.until("the server to close the session after the bound (sessions open)", Duration.ofMillis(FRAME_TIMEOUT_MS + 5000),
                    Duration.ofMillis(20), stats::sessions, n -> n == 0);
        }
    }

    private static Socket connect(int receiveBuffer) throws IOException {
        Socket s = new Socket();
        if (receiveBuffer > 0) {
            s.setReceiveBufferSize(receiveBuffer); // before connect: it sets the advertised window
        }
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        return s;
    }
}
