package dev.leasehold.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Hostile and slow clients side by side with a normal one, against a real server process:
 * slow readers, non-readers (who read everything at the end), slowloris connections, connect/close
 * churn. The normal client must keep working with a bounded latency (at most 1 call in 10,000
 * not Acquired, each printed); afterwards the server must be back to its file descriptors and
 * sessions of before.
 *
 * <p>CI runs {@value #SHORT_SECONDS} s with 40 slowloris connections. The long run:
 * {@code ./mvnw test -Dtest=SoakIntegrationTests -Dleasehold.soak.seconds=600 -Dleasehold.soak.slowloris=1000}.
 * The figures (p50/p99 of the normal client, fds, sessions, heap before and after) are printed
 * as {@code SOAK} lines.
 */
@FaultRun
class SoakIntegrationTests {

    static final int SHORT_SECONDS = 20;
    static final Pattern HTTP_PORT = Pattern.compile("Netty started on port (\\d+)");

    @Test
    void normalClientKeepsWorkingAmongSlowAndHostileClients() throws Exception {
        int seconds = Integer.getInteger("leasehold.soak.seconds", SHORT_SECONDS);
        Path dataDir = Files.createTempDirectory("leasehold-soak");
        ExecutorService pool = Executors.newCachedThreadPool();
        AtomicBoolean running = new AtomicBoolean(true);
        try (ServerProcess server = ServerProcess.start(dataDir, Map.of("leasehold.frame-timeout", "2s",
                "leasehold.recovery-grace", "0s", "management.endpoint.health.show-details", "always"))) {
            Matcher m = HTTP_PORT.matcher(server.output());
            assertThat(m.find()).as("HTTP port in the log").isTrue();
            Actuator actuator = new Actuator(Integer.parseInt(m.group(1)));
            Figures before = Figures.of(server, actuator);

            List<Future<?>> tasks = new ArrayList<>();
            List<Future<Long>> nonReaders = new ArrayList<>();
            int nonReaderPings = 1_000_000; // 10 MB each: past the socket buffers (megabytes on loopback), so the server pauses them
            for (int i = 0; i < 4; i++) {
                nonReaders.add(pool.submit(() -> nonReader(server.port(), nonReaderPings, running)));
                tasks.add(pool.submit(() -> {
                    slowReader(server.port(), running);
                    return null;
                }));
            }
            AtomicLong slowlorisCut = new AtomicLong();
            int slowlorises = Integer.getInteger("leasehold.soak.slowloris", 40);
            for (int i = 0; i < slowlorises; i++) {
                tasks.add(pool.submit(() -> {
                    slowloris(server.port(), running, slowlorisCut);
                    return null;
                }));
            }
            AtomicLong churned = new AtomicLong();
            tasks.add(pool.submit(() -> {
                churn(server.port(), running, churned);
                return null;
            }));

            long[] latencies = new long[2_000_000];
            int ops = 0;
            int failures = 0;
            Map<String, Integer> failed = new java.util.TreeMap<>();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            try (LeaseholdClient client = LeaseholdClient.create("127.0.0.1:" + server.port())) {
                for (int i = 0; System.nanoTime() < end && ops < latencies.length; i++) {
                    long t0 = System.nanoTime();
                    AcquireOutcome out = client.acquire("soak/" + (i % 64), 1, 5);
                    if (out instanceof AcquireOutcome.Acquired a) {
                        client.release(a.ticket().key(), a.ticket().token(), Duration.ofSeconds(5));
                        latencies[ops++] = System.nanoTime() - t0;
                    } else {
                        failures++;
                        failed.merge(out.toString(), 1, Integer::sum);
                    }
                }
            }
            running.set(false);
            long answersToNonReaders = 0;
            for (Future<Long> f : nonReaders) {
                answersToNonReaders += f.get(60, TimeUnit.SECONDS);
            }
            for (Future<?> f : tasks) {
                f.get(30, TimeUnit.SECONDS);
            }
            Figures after = Figures.settled(server, actuator, before);

            long[] sorted = Arrays.copyOf(latencies, ops);
            Arrays.sort(sorted);
            double p50 = sorted[ops / 2] / 1e6;
            double p99 = sorted[Math.min(ops - 1, (int) (ops * 0.99))] / 1e6;
            System.out.printf("SOAK %d s: normal client %d acquire+release, %d failed %s, p50 %.2f ms, p99 %.2f ms,"
                    + " max %.2f ms%n", seconds, ops, failures, failed, p50, p99, sorted[ops - 1] / 1e6);
            System.out.printf("SOAK non-readers: %d answers after pausing (of %d); slowloris cut off (X 5): %d;"
                    + " churn: %d connect/ping/close%n", answersToNonReaders, 4L * nonReaderPings, slowlorisCut.get(),
                    churned.get());
            System.out.printf("SOAK server before: %s%nSOAK server after:  %s%n", before, after);

            // On 2 shared cores a call can starve past its deadline plus response grace, which the
            // client reports as Indeterminate (it never guesses); one such call in 52,149 was seen in
            // a full verify under load. Allowed: 1 in 10,000, each printed above with its outcome.
            assertThat(failures).as("normal client failures %s", failed).isLessThanOrEqualTo(Math.max(2, ops / 10_000));
            assertThat(ops).isGreaterThan(seconds * 20);
            assertThat(p99).as("p99 ms of the normal client (2 noisy cores)").isLessThan(2000);
            assertThat(answersToNonReaders).as("every non-reader got every answer").isEqualTo(4L * nonReaderPings);
            assertThat(slowlorisCut.get()).as("slowloris connections are cut off by the frame timeout").isPositive();
            assertThat(churned.get()).isPositive();
            assertThat(after.sessions).as("sessions after").isEqualTo(before.sessions);
            assertThat(after.fds).as("server fds after").isLessThanOrEqualTo(before.fds + 16);
        } finally {
            running.set(false);
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
            TestServer.deleteTree(dataDir);
        }
    }

    /** Pipelines {@code pings} Pings, reads nothing until the soak ends, then reads all: returns the count. */
    private static long nonReader(int port, int pings, AtomicBoolean running) throws Exception {
        try (Socket s = connect(port)) {
            Thread writer = new Thread(() -> {
                try {
                    ByteBuffer b = ByteBuffer.allocate(10 * pings);
                    for (int i = 0; i < pings; i++) {
                        b.put(FrameWriter.encode(new Request.Ping(i)));
                    }
                    // One write: the kernel takes what fits, so the server's last read before it
                    // pauses ends mid-frame, with the frame timer running (as it would for any client).
                    s.getOutputStream().write(b.array());
                    s.getOutputStream().flush();
                } catch (IOException e) {
                    // the reader below sees the session end
                }
            }, "soak-non-reader");
            writer.setDaemon(true);
            writer.start();
            while (running.get()) {
                Thread.sleep(50); // real time: the soak runs for its duration; this client only waits it out
            }
            long got = readAnswers(s, pings, Duration.ofSeconds(60));
            writer.join(10_000);
            return got;
        }
    }

    /** Pipelines Pings and reads 8 KB of answers every 50 ms, until the soak ends. */
    private static void slowReader(int port, AtomicBoolean running) throws Exception {
        try (Socket s = connect(port)) {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            byte[] frames = new byte[10 * 1000];
            ByteBuffer b = ByteBuffer.wrap(frames);
            for (int k = 0; k < 1000; k++) {
                b.put(FrameWriter.encode(new Request.Ping(k)));
            }
            byte[] buf = new byte[8192];
            s.setSoTimeout(100);
            while (running.get()) {
                out.write(frames); // 10 KB in, then 8 KB out: the server soon has to pause it
                try {
                    in.read(buf);
                } catch (java.net.SocketTimeoutException e) {
                    // nothing yet
                }
                Thread.sleep(50); // real time: a slow reader is slow by design
            }
        }
    }

    /** Trickles an Acquire frame one byte per 200 ms; the 2 s frame timeout cuts it off; reconnects. */
    private static void slowloris(int port, AtomicBoolean running, AtomicLong cut) throws Exception {
        byte[] frame = FrameWriter.encode(new Request.Acquire(1, 5, 42, Request.key("slowloris/key")));
        while (running.get()) {
            try (Socket s = connect(port)) {
                OutputStream out = s.getOutputStream();
                for (int i = 0; i < frame.length && running.get(); i++) {
                    out.write(frame[i]);
                    out.flush();
                    Thread.sleep(200); // real time: slowloris sends one byte per 200 ms by design
                }
                s.setSoTimeout(100);
                if (s.getInputStream().read() == 'X') {
                    cut.incrementAndGet();
                }
            } catch (IOException e) {
                cut.incrementAndGet(); // closed under our feet: cut off too
            }
        }
    }

    /** Connects, pings, closes, as fast as it can. */
    private static void churn(int port, AtomicBoolean running, AtomicLong count) throws Exception {
        while (running.get()) {
            try (Socket s = connect(port)) {
                s.getOutputStream().write(FrameWriter.encode(new Request.Ping(1)));
                s.setSoTimeout(5000);
                if (s.getInputStream().read() == 'P') {
                    count.incrementAndGet();
                }
            }
        }
    }

    private static long readAnswers(Socket s, long expected, Duration timeout) throws Exception {
        s.setSoTimeout((int) timeout.toMillis());
        InputStream in = s.getInputStream();
        AnswerDecoder decoder = new AnswerDecoder();
        ByteBuffer buf = ByteBuffer.allocate(1 << 16).flip();
        byte[] chunk = new byte[1 << 16];
        long got = 0;
        while (got < expected) {
            Answer a = decoder.next(buf);
            if (a == null) {
                int n = in.read(chunk);
                if (n < 0) {
                    break;
                }
                buf.compact().put(chunk, 0, n).flip();
            } else if (a instanceof Answer.Pong) {
                got++;
            } else {
                break;
            }
        }
        return got;
    }

    private static Socket connect(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        return s;
    }

    /** What the server process holds: open fds, protocol sessions, heap after a GC. */
    record Figures(long fds, long sessions, long heapBytes) {

        static Figures of(ServerProcess server, Actuator actuator) throws Exception {
            gc(server.pid());
            long fds;
            try (Stream<Path> s = Files.list(Path.of("/proc", String.valueOf(server.pid()), "fd"))) {
                fds = s.count();
            }
            String text = actuator.scrape().text();
            return new Figures(fds, (long) sum(text, "leasehold_sessions "), (long) sum(text, "jvm_memory_used_bytes{area=\"heap\""));
        }

        /** After the clients closed: waits (bounded) for the sessions to go, then measures. */
        static Figures settled(ServerProcess server, Actuator actuator, Figures before) throws Exception {
            try {
                // Polling a separate process: its sessions close on its own schedule.
                return Wait.until("the server (pid " + server.pid() + ") to be back to " + before.sessions
                        + " sessions", Duration.ofSeconds(20), Duration.ofMillis(200), () -> of(server, actuator),
                        f -> f.sessions == before.sessions);
            } catch (AssertionError e) {
                System.out.println("SOAK " + e.getMessage()); // "sessions after" below fails with the figures
                return of(server, actuator);
            }
        }

        private static void gc(long pid) throws Exception {
            Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
            Process p = new ProcessBuilder(jcmd.toString(), String.valueOf(pid), "GC.run").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.waitFor(30, TimeUnit.SECONDS);
        }

        private static double sum(String text, String prefix) {
            return text.lines().filter(l -> l.startsWith(prefix))
                    .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
        }

        @Override
        public String toString() {
            return String.format("fds %d, sessions %d, heap %.1f MB (after GC)", fds, sessions, heapBytes / 1e6);
        }
    }
}
