package dev.leasehold.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The watch workload (BENCHMARKS.md "W6: observe"): one observer session watches {@code --keys}
 * keys (PROTOCOL.md section 16, {@code O}) while changer sessions grant and release those keys at
 * {@code --rate} changes per second (an {@code A} with wait 0 then its {@code R}: two changes,
 * two events). Raw frames over blocking sockets, like {@link LeaseholdConn}, so the generator
 * measures the server, not a client library.
 *
 * <p>Reported: the event latency, from the changer writing the request that made a change to the
 * observer reading that change's event (the decision happens in between; the same requests'
 * answer latency is printed beside it, so the event's own cost is the difference); events
 * received and coalesced; and the server's CPU per event: the same changes are run first without
 * the observer, and the CPU the watches add is divided by the events sent. Every loop is bounded
 * by {@code --duration}; a socket read times out after 30 s.
 */
final class WatchBench {

    private static final int LEASE_SECONDS = 30;

    private final String host;
    private final int port;
    private final String[] pids;
    private final int keyCount;
    private final int rate;
    private final int changers;
    private final int batch;
    private final double warmupSeconds;
    private final double durationSeconds;
    private final byte[][] keys;

    private WatchBench(Map<String, String> a) {
        host = a.getOrDefault("host", "127.0.0.1");
        port = Integer.parseInt(required(a, "port"));
        pids = required(a, "pid").split(",");
        keyCount = Integer.parseInt(a.getOrDefault("keys", "1000"));
        rate = Integer.parseInt(a.getOrDefault("rate", "10000"));
        changers = Integer.parseInt(a.getOrDefault("changers", "4"));
        batch = Integer.parseInt(a.getOrDefault("batch", "10"));
        warmupSeconds = Double.parseDouble(a.getOrDefault("warmup", "3"));
        durationSeconds = Double.parseDouble(a.getOrDefault("duration", "10"));
        String prefix = "watch-" + Long.toString(System.nanoTime() % 1_000_000, 36) + "/";
        keys = new byte[keyCount][];
        for (int i = 0; i < keyCount; i++) {
            keys[i] = (prefix + i).getBytes(StandardCharsets.UTF_8);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        WatchBench bench = new WatchBench(a);
        String label = a.getOrDefault("label", "leasehold");
        String row = bench.run(label);
        System.out.println(row);
        if (a.containsKey("out")) {
            Path out = Path.of(a.get("out"));
            if (!Files.exists(out)) {
                Files.writeString(out, HEADER + "\n");
            }
            Files.writeString(out, row + "\n", StandardOpenOption.APPEND);
        }
    }

    static final String HEADER = """
            | target | changes/s (asked → made) | events read (coalesced) | event latency p50 / p99 / max (ms) | answer latency p50 / p99 (ms) | server CPU µs per change, no watch → watched | server CPU µs per event |
            |---|---|---|---|---|---|---|""";

    private String run(String label) throws Exception {
        System.out.printf(Locale.ROOT, "== %s: %d keys, %d changes/s asked, %d changers, batches of %d, load %s%n",
                label, keyCount, rate, changers, batch, Proc.loadAverage());
        // Phase 1: the changes alone, warmed up, then measured: the CPU a change costs unwatched.
        runChangers(warmupSeconds, null);
        double cpu0 = cpu();
        Changes plain = runChangers(durationSeconds, null);
        double plainCpu = cpu() - cpu0;
        // Phase 2: the same changes with every key watched.
        try (Observer observer = new Observer(host, port, keyCount)) {
            observer.subscribe(keys);
            runChangers(warmupSeconds, observer);
            observer.startRecording();
            double cpu1 = cpu();
            Changes watched = runChangers(durationSeconds, observer);
            // The last events may still be in flight: a bounded wait for the observer to go quiet.
            observer.awaitQuiet(2_000);
            double watchedCpu = cpu() - cpu1;
            Observer.Recorded events = observer.stopRecording();
            return row(label, plain, plainCpu, watched, watchedCpu, events);
        }
    }

    private String row(String label, Changes plain, double plainCpu, Changes watched, double watchedCpu,
            Observer.Recorded events) {
        long[] eventLatency = new long[events.count];
        long[] answerLatency = new long[events.count];
        int matched = 0;
        long coalesced = 0;
        for (int i = 0; i < events.count; i++) {
            if ((events.flags[i] & 1) != 0) {
                coalesced++;
                continue; // a kept event stands for several changes: no single change to time it from
            }
            Integer at = watched.byEvent.get(eventKey(events.state[i], events.token[i]));
            if (at == null) {
                continue;
            }
            eventLatency[matched] = events.arrival[i] - watched.sent[at];
            answerLatency[matched] = watched.answered[at] - watched.sent[at];
            matched++;
        }
        long[] ev = Arrays.copyOf(eventLatency, matched);
        long[] an = Arrays.copyOf(answerLatency, matched);
        Arrays.sort(ev);
        Arrays.sort(an);
        double plainPerChange = plainCpu * 1e6 / Math.max(1, plain.count);
        double watchedPerChange = watchedCpu * 1e6 / Math.max(1, watched.count);
        double perEvent = (watchedCpu - plainCpu * watched.count / Math.max(1.0, plain.count)) * 1e6
                / Math.max(1, events.count);
        System.out.printf(Locale.ROOT, "   %d changes made (%d unwatched), %d events read, %d matched to their change, %d coalesced%n",
                watched.count, plain.count, events.count, matched, coalesced);
        return String.format(Locale.ROOT,
                "| %s | %d → %.0f | %d (%d) | %.2f / %.2f / %.2f | %.2f / %.2f | %.1f → %.1f | %.1f |",
                label, rate, watched.count / durationSeconds, events.count, coalesced,
                ms(pct(ev, 0.50)), ms(pct(ev, 0.99)), ms(ev.length == 0 ? 0 : ev[ev.length - 1]),
                ms(pct(an, 0.50)), ms(pct(an, 0.99)), plainPerChange, watchedPerChange, perEvent);
    }

    private double cpu() {
        double s = 0;
        for (String pid : pids) {
            s += Proc.cpuSeconds(pid);
        }
        return s;
    }

    /** What the changers did: for each change, the request's send and answer times, found by its event. */
    static final class Changes {
        final long[] sent;
        final long[] answered;
        final Map<Long, Integer> byEvent = new HashMap<>();
        int count;

        Changes(int capacity) {
            sent = new long[capacity];
            answered = new long[capacity];
        }

        synchronized void add(byte state, long token, long sentNanos, long answeredNanos) {
            if (count == sent.length) {
                return;
            }
            sent[count] = sentNanos;
            answered[count] = answeredNanos;
            byEvent.put(eventKey(state, token), count);
            count++;
        }
    }

    /** A grant shows as an {@code H} event with its token, its release as {@code F} with the same token. */
    static long eventKey(byte state, long token) {
        return (token << 1) | (state == 'H' ? 1 : 0);
    }

    private Changes runChangers(double seconds, Observer observer) throws Exception {
        Changes changes = new Changes((int) Math.min(Integer.MAX_VALUE - 8, (long) (rate * seconds * 1.2) + 1024));
        long end = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int c = 0; c < changers; c++) {
            int id = c;
            Thread t = new Thread(() -> {
                try (Socket s = connect(host, port)) {
                    changer(id, s, end, changes);
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, "changer-" + c);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("a changer failed", failures.get(0));
        }
        return changes;
    }

    /**
     * One changer: its own keys (every {@code changers}-th), {@code batch} at a time: the acquires
     * pipelined in one write (wait 0: answered in order), then their releases, paced so that all
     * changers together make {@code rate} changes per second.
     */
    private void changer(int id, Socket s, long end, Changes changes) throws IOException {
        OutputStream out = s.getOutputStream();
        Reader in = new Reader(s.getInputStream());
        byte[] w = new byte[batch * 64 + 1024];
        List<Integer> mine = new ArrayList<>();
        for (int k = id; k < keyCount; k += changers) {
            mine.add(k);
        }
        long owner = ((long) id + 1) << 40;
        long intervalNanos = (long) (1e9 * 2 * batch * changers / rate); // two changes per key per batch
        long next = System.nanoTime();
        int cursor = 0;
        long[] tokens = new long[batch];
        int[] batchKeys = new int[batch];
        while (System.nanoTime() < end) {
            int p = 0;
            for (int i = 0; i < batch; i++) {
                int k = mine.get(cursor++ % mine.size());
                batchKeys[i] = k;
                p = putAcquire(w, p, keys[k], ++owner);
            }
            long t0 = System.nanoTime();
            out.write(w, 0, p);
            for (int i = 0; i < batch; i++) {
                tokens[i] = in.acquireAnswer();
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < batch; i++) {
                if (tokens[i] > 0) {
                    changes.add((byte) 'H', tokens[i], t0, t1);
                }
            }
            p = 0;
            for (int i = 0; i < batch; i++) {
                if (tokens[i] > 0) {
                    p = putRelease(w, p, keys[batchKeys[i]], tokens[i]);
                }
            }
            long t2 = System.nanoTime();
            out.write(w, 0, p);
            for (int i = 0; i < batch; i++) {
                if (tokens[i] > 0) {
                    in.tokenAnswer();
                }
            }
            long t3 = System.nanoTime();
            for (int i = 0; i < batch; i++) {
                if (tokens[i] > 0) {
                    changes.add((byte) 'F', tokens[i], t2, t3);
                }
            }
            next += intervalNanos;
            long sleep = next - System.nanoTime();
            if (sleep > 0) {
                LockSupport.parkNanos(sleep);
            } else if (sleep < -1_000_000_000L) {
                next = System.nanoTime(); // a second behind: the rate is not reachable, do not burst to catch up
            }
        }
    }

    static Socket connect(String host, int port) throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(host, port), 5000);
        s.setSoTimeout(30_000);
        return s;
    }

    private static int putAcquire(byte[] w, int p, byte[] key, long owner) {
        w[p] = 'A';
        w[p + 1] = 0; // wait 0: the key is this changer's, free unless its last release is still in flight
        w[p + 2] = LEASE_SECONDS;
        putLong(w, p + 3, owner);
        System.arraycopy(key, 0, w, p + 11, key.length);
        p += 11 + key.length;
        w[p++] = '\n';
        return p;
    }

    private static int putRelease(byte[] w, int p, byte[] key, long token) {
        w[p] = 'R';
        putLong(w, p + 1, token);
        System.arraycopy(key, 0, w, p + 9, key.length);
        p += 9 + key.length;
        w[p++] = '\n';
        return p;
    }

    static void putLong(byte[] w, int p, long v) {
        for (int i = 7; i >= 0; i--) {
            w[p + i] = (byte) v;
            v >>>= 8;
        }
    }

    static double ms(long nanos) {
        return nanos / 1e6;
    }

    static long pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }

    private static String required(Map<String, String> a, String name) {
        String v = a.get(name);
        if (v == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return v;
    }

    /** Buffered reads of the answers a changer expects. */
    static final class Reader {
        private final InputStream in;
        private final byte[] buf = new byte[64 * 1024];
        private int pos;
        private int lim;

        Reader(InputStream in) {
            this.in = in;
        }

        int u8() throws IOException {
            if (pos == lim) {
                int n = in.read(buf, 0, buf.length);
                if (n < 0) {
                    throw new IOException("server closed the session");
                }
                pos = 0;
                lim = n;
            }
            return buf[pos++] & 0xFF;
        }

        long u64() throws IOException {
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = (v << 8) | u8();
            }
            return v;
        }

        int u16() throws IOException {
            return (u8() << 8) | u8();
        }

        void skip(int n) throws IOException {
            for (int i = 0; i < n; i++) {
                u8();
            }
        }

        /** The token of an {@code A}, or 0 for {@code T} or {@code B}. */
        long acquireAnswer() throws IOException {
            int op = u8();
            switch (op) {
                case 'A' -> {
                    u64();
                    long token = u64();
                    skip(5);
                    return token;
                }
                case 'T', 'B' -> {
                    skip(9);
                    return 0;
                }
                default -> throw unexpected(op);
            }
        }

        void tokenAnswer() throws IOException {
            int op = u8();
            if (op != 'R' && op != 'N') {
                throw unexpected(op);
            }
            skip(9);
        }

        IOException unexpected(int op) throws IOException {
            if (op == 'X') {
                StringBuilder sb = new StringBuilder();
                for (int c = u8(); c != '\n'; c = u8()) {
                    sb.append((char) c);
                }
                return new IOException("server error X: " + sb);
            }
            return new IOException("unexpected answer op 0x" + Integer.toHexString(op));
        }
    }
}
