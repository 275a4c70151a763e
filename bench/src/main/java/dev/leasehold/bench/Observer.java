package dev.leasehold.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The observer session of {@link WatchBench}: one socket, one watch per key (PROTOCOL.md section
 * 16), and a reader thread that stamps every event with the time it was read. Recording is
 * switched on for the measured phase only, into preallocated arrays (no allocation per event).
 */
final class Observer implements AutoCloseable {

    /** Recorded events: read time, state byte, flags, token; the first {@link #count} are valid. */
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
    private final CountDownLatch firstEvents;
    private volatile Recorded recording;
    private volatile long lastEventNanos = System.nanoTime();
    private volatile Throwable failure;

    Observer(String host, int port, int watches) throws IOException {
        socket = WatchBench.connect(host, port);
        in = new WatchBench.Reader(socket.getInputStream());
        firstEvents = new CountDownLatch(watches);
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
        OutputStream out = socket.getOutputStream();
        out.write(w, 0, p);
        if (!firstEvents.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not every watch got its first event within 60 s"
                    + (failure == null ? "" : ": " + failure));
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
                    firstEvents.countDown();
                }
                Recorded r = recording;
                if (r != null && r.count < r.arrival.length) {
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
