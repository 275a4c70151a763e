package dev.leasehold.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The observer session of {@link WatchBench}: one socket, one watch per key (PROTOCOL.md section
 * 16), and a reader thread that stamps every event with the time it was read. Recording is
 * switched on for the measured phase only, into preallocated arrays (no allocation per event).
 */
final class Observer implements AutoCloseable {

    /** Recorded change events (not first events): read time, state byte, flags, token; the first {@link #count} are valid. */
    static final class Recorded {
        final long[] arrival;
        final byte[] state;
        final byte[] flags;
        final long[] token;
        int count;

        Recorded(int capacity) {
            arrival = new long[capacity];
            state = new byte[capacity];
            flags = new byte[capacity];
            token = new long[capacity];
        }
    }

    private static final int CAPACITY = 4_000_000;

    private final Socket socket;
    private final WatchBench.Reader in;
    private final Thread reader;
    /** First events (cause 0) and {@code U} answers read so far: subscribe and unsubscribe wait on them. */
    private final AtomicInteger firstEvents = new AtomicInteger();
    private final AtomicInteger unobserved = new AtomicInteger();
    private volatile Recorded recording;
    private volatile long lastEventNanos = System.nanoTime();
    private volatile Throwable failure;

    Observer(String host, int port) throws IOException {
        socket = WatchBench.connect(host, port);
        in = new WatchBench.Reader(socket.getInputStream());
        reader = new Thread(this::read, "observer");
        reader.setDaemon(true);
        reader.start();
    }

    /** Sends one {@code O} per key (watch id = index + 1) in one write, then waits for every first event. */
    void subscribe(byte[][] keys) throws IOException, InterruptedException {
        int size = 0;
        for (byte[] k : keys) {
            size += 10 + k.length;
        }
        byte[] w = new byte[size];
        int p = 0;
        for (int i = 0; i < keys.length; i++) {
            w[p] = 'O';
            WatchBench.putLong(w, p + 1, i + 1);
            System.arraycopy(keys[i], 0, w, p + 9, keys[i].length);
            p += 9 + keys[i].length;
            w[p++] = '\n';
        }
        int target = firstEvents.get() + keys.length;
        socket.getOutputStream().write(w, 0, p);
        awaitCount(firstEvents, target, "every watch's first event");
    }

    /** Sends {@code U} for watches 1 to {@code watches} in one write and waits for every answer. */
    void unsubscribeAll(int watches) throws IOException, InterruptedException {
        byte[] w = new byte[watches * 10];
        for (int i = 0; i < watches; i++) {
            w[i * 10] = 'U';
            WatchBench.putLong(w, i * 10 + 1, i + 1);
            w[i * 10 + 9] = '\n';
        }
        int target = unobserved.get() + watches;
        OutputStream out = socket.getOutputStream();
        out.write(w);
        awaitCount(unobserved, target, "every U answered");
    }

    private void awaitCount(AtomicInteger counter, int target, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (counter.get() < target) {
            if (failure != null || System.nanoTime() > deadline) {
                throw new IllegalStateException("not " + what + " within 60 s" + (failure == null ? "" : ": " + failure));
            }
            Thread.sleep(5); // polling the reader's count; the bench's own thread, not a server's
        }
    }

    void startRecording() {
        recording = new Recorded(CAPACITY);
    }

    Recorded stopRecording() {
        Recorded r = recording;
        recording = null;
        if (failure != null) {
            throw new IllegalStateException("the observer failed", failure);
        }
        return r;
    }

    /** Returns once no event was read for 200 ms, or after {@code maxMillis}. */
    void awaitQuiet(long maxMillis) throws InterruptedException {
        long deadline = System.nanoTime() + maxMillis * 1_000_000;
        while (System.nanoTime() < deadline && System.nanoTime() - lastEventNanos < 200_000_000L) {
            Thread.sleep(20); // polling the reader's last-event stamp; the bench's own thread, not a server's
        }
    }

    private void read() {
        try {
            while (true) {
                int op = in.u8();
                if (op == 'U') {
                    in.skip(9);
                    unobserved.incrementAndGet();
                    continue;
                }
                if (op != 'O') {
                    throw in.unexpected(op);
                }
                in.u64(); // watch
                byte state = (byte) in.u8();
                int cause = in.u8();
                byte flags = (byte) in.u8();
                long token = in.u64();
                in.u16(); // count
                in.u16(); // limit
                int vlen = in.u16();
                in.skip(vlen + 1);
                long now = System.nanoTime();
                if (cause == 0) {
                    firstEvents.incrementAndGet();
                }
                Recorded r = recording;
                if (r != null && cause != 0 && r.count < r.arrival.length) { // first events are no change
                    int i = r.count;
                    r.arrival[i] = now;
                    r.state[i] = state;
                    r.flags[i] = flags;
                    r.token[i] = token;
                    r.count = i + 1;
                }
                lastEventNanos = now; // volatile, after the record: awaitQuiet's read sees it
            }
        } catch (IOException e) {
            if (!socket.isClosed()) {
                failure = e;
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
