package dev.leasehold.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Cluster failover as a user sees it (bench/run.sh {@code CLUSTER=1}): {@code kill -9} of the
 * leader of a cluster started by {@code bin/leasehold-cluster}, then the time until any node
 * grants a wait=0 Acquire on a fresh session. Every node is probed in parallel, so a node that
 * is down or not serving delays only its own probe. The killed node is restarted with
 * {@code bin/leasehold-cluster start DIR} and the next round waits until all three are ready.
 *
 * <pre>
 * Failover --ports P1,P2,P3 --http-ports H1,H2,H3 --dir CLUSTER_DIR [--rounds 5] [--out FILE]
 * </pre>
 *
 * Every wait is bounded (30 s per probe, 120 s per restart): no round can hang.
 */
final class Failover {

    private final int[] ports;
    private final int[] httpPorts;
    private final Path dir;
    private final AtomicLong owner = new AtomicLong(System.nanoTime() & 0xFFFFFFFFL);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private Failover(int[] ports, int[] httpPorts, Path dir) {
        this.ports = ports;
        this.httpPorts = httpPorts;
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        String ports = null;
        String httpPorts = null;
        String dir = null;
        String out = null;
        int rounds = 5;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--ports" -> ports = args[i + 1];
                case "--http-ports" -> httpPorts = args[i + 1];
                case "--dir" -> dir = args[i + 1];
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--out" -> out = args[i + 1];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (ports == null || httpPorts == null || dir == null) {
            throw new IllegalArgumentException("usage: Failover --ports P1,P2,P3 --http-ports H1,H2,H3 --dir DIR [--rounds N] [--out FILE]");
        }
        Failover f = new Failover(parse(ports), parse(httpPorts), Path.of(dir));
        String row = f.run(rounds);
        System.out.println(row);
        if (out != null) {
            Files.writeString(Path.of(out), row + "\n", StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        }
    }

    private static int[] parse(String list) {
        return java.util.Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    String run(int rounds) throws Exception {
        List<Long> ms = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            awaitAllReady();
            int leader = leader();
            long pid = Long.parseLong(Files.readString(dir.resolve("n" + (leader + 1) + ".pid")).trim());
            long t0 = System.nanoTime();
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // SIGKILL
            long took = TimeUnit.NANOSECONDS.toMillis(firstGrant() - t0);
            ms.add(took);
            System.out.printf(Locale.ROOT, "failover round %d: leader n%d (pid %d) killed, first grant after %d ms; load %s%n",
                    r + 1, leader + 1, pid, took, Proc.loadAverage());
            restart();
        }
        awaitAllReady();
        Collections.sort(ms);
        long p50 = ms.get(ms.size() / 2);
        long p90 = ms.get((int) Math.ceil(ms.size() * 0.9) - 1);
        return String.format(Locale.ROOT,
                "| Cluster failover, `kill -9` of the leader → first `A` on a fresh session: min / p50 / p90 / max (ms), %d rounds | %d / %d / %d / %d |",
                rounds, ms.get(0), p50, p90, ms.get(ms.size() - 1));
    }

    /** The node that grants now (a wait=0 Acquire with a 1 s lease, left to expire). */
    private int leader() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < ports.length; i++) {
                if (grants(ports[i], 1000)) {
                    return i;
                }
            }
            Thread.sleep(50); // between probe passes while an election runs
        }
        throw new IllegalStateException("no node granted within 30 s");
    }

    /** Probes every node in parallel on fresh sessions until one grants; returns when (nanoTime). */
    private long firstGrant() throws Exception {
        CompletableFuture<Long> granted = new CompletableFuture<>();
        List<Thread> probes = new ArrayList<>();
        for (int port : ports) {
            Thread t = new Thread(() -> {
                while (!granted.isDone()) {
                    if (grants(port, 2000)) {
                        granted.complete(System.nanoTime());
                        return;
                    }
                    try {
                        Thread.sleep(20); // between attempts on a node that is down or said X 8
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "failover-probe-" + port);
            t.setDaemon(true);
            t.start();
            probes.add(t);
        }
        try {
            return granted.get(30, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("no node granted within 30 s of the kill");
        } finally {
            granted.complete(-1L);
            for (Thread t : probes) {
                t.interrupt();
                t.join(5000);
            }
        }
    }

    /** One wait=0 Acquire on a fresh session; true if answered {@code A}. */
    private boolean grants(int port, int readTimeoutMs) {
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            s.setSoTimeout(readTimeoutMs);
            byte[] key = ("failover-probe-" + owner.incrementAndGet()).getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(1 + 2 + 8 + key.length + 1);
            b.put((byte) 'A').put((byte) 0).put((byte) 1).putLong(owner.get()).put(key).put((byte) '\n');
            OutputStream out = s.getOutputStream();
            out.write(b.array());
            InputStream in = s.getInputStream();
            return in.read() == 'A';
        } catch (IOException e) {
            return false; // down, not serving (X 8 then close), or too slow
        }
    }

    private void restart() throws Exception {
        Process p = new ProcessBuilder("bin/leasehold-cluster", "start", dir.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("bin/leasehold-cluster start did not return");
        }
    }

    /** Every node's readiness is 200: joined, and a serving leader known. */
    private void awaitAllReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        for (int h : httpPorts) {
            while (!ready(h)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("node with HTTP port " + h + " not ready within 120 s");
                }
                Thread.sleep(100); // a restarted JVM takes seconds to start and catch up
            }
        }
    }

    private boolean ready(int httpPort) {
        try {
            HttpResponse<Void> r = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + httpPort + "/actuator/health/readiness"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
