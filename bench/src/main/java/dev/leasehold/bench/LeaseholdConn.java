package dev.leasehold.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The Leasehold wire protocol (docs/PROTOCOL.md) over a blocking socket, written by hand so the
 * load generator costs about what Jedis costs: one write per request (or per pipelined batch),
 * buffered reads, no per-request objects beyond the caller's.
 */
final class LeaseholdConn implements LockConn {

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] wbuf = new byte[256 * 1024];
    private final byte[] rbuf = new byte[64 * 1024];
    private int rpos;
    private int rlim;
    private long owner;
    private long nonce;

    LeaseholdConn(String host, int port) throws IOException {
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress(host, port), 5000);
        socket.setSoTimeout(30_000); // no load loop can hang forever on a dead server
        out = socket.getOutputStream();
        in = socket.getInputStream();
        owner = (long) System.identityHashCode(this) << 32;
    }

    @Override
    public long acquire(byte[] key, int waitSeconds, int leaseSeconds) throws IOException {
        int n = putAcquire(0, key, waitSeconds, leaseSeconds, ++owner);
        out.write(wbuf, 0, n);
        return readAcquireAnswer();
    }

    @Override
    public boolean release(byte[] key, long token) throws IOException {
        int n = putRelease(0, key, token);
        out.write(wbuf, 0, n);
        return readTokenAnswer() == 'R';
    }

    @Override
    public void acquireBatch(byte[][] keys, int from, int n, int leaseSeconds, long[] tokensOut) throws IOException {
        int p = 0;
        for (int i = 0; i < n; i++) {
            p = putAcquire(p, keys[from + i], 0, leaseSeconds, ++owner);
        }
        out.write(wbuf, 0, p);
        // wait = 0 Acquires are answered at once, so in request order.
        for (int i = 0; i < n; i++) {
            tokensOut[i] = readAcquireAnswer();
        }
    }

    @Override
    public int releaseBatch(byte[][] keys, int from, int n, long[] tokens) throws IOException {
        int p = 0;
        int sent = 0;
        for (int i = 0; i < n; i++) {
            if (tokens[i] > 0) {
                p = putRelease(p, keys[from + i], tokens[i]);
                sent++;
            }
        }
        out.write(wbuf, 0, p);
        int released = 0;
        for (int i = 0; i < sent; i++) {
            if (readTokenAnswer() == 'R') {
                released++;
            }
        }
        return released;
    }

    @Override
    public void ping() throws IOException {
        wbuf[0] = 'P';
        putLong(1, ++nonce);
        wbuf[9] = '\n';
        out.write(wbuf, 0, 10);
        int op = readByte();
        if (op != 'P') {
            throw unexpected(op);
        }
        readLong();
        readByte();
    }

    private int putAcquire(int p, byte[] key, int wait, int lease, long ownerId) {
        wbuf[p] = 'A';
        wbuf[p + 1] = (byte) wait;
        wbuf[p + 2] = (byte) lease;
        putLong(p + 3, ownerId);
        System.arraycopy(key, 0, wbuf, p + 11, key.length);
        p += 11 + key.length;
        wbuf[p++] = '\n';
        return p;
    }

    private int putRelease(int p, byte[] key, long token) {
        wbuf[p] = 'R';
        putLong(p + 1, token);
        System.arraycopy(key, 0, wbuf, p + 9, key.length);
        p += 9 + key.length;
        wbuf[p++] = '\n';
        return p;
    }

    private void putLong(int p, long v) {
        for (int i = 7; i >= 0; i--) {
            wbuf[p + i] = (byte) v;
            v >>>= 8;
        }
    }

    /** Token for {@code A}, {@link #TIMED_OUT} for {@code T}, {@link #BUSY} for {@code B}. */
    private long readAcquireAnswer() throws IOException {
        int op = readByte();
        switch (op) {
            case 'A' -> {
                readLong(); // owner
                long token = readLong();
                readByte();
                readByte();
                readByte();
                readByte(); // queued_ms
                readByte(); // \n
                return token;
            }
            case 'T' -> {
                readLong();
                readByte();
                return TIMED_OUT;
            }
            case 'B' -> {
                readLong();
                readByte();
                return BUSY;
            }
            default -> throw unexpected(op);
        }
    }

    /** Reads an R/E/N answer; returns its op. */
    private int readTokenAnswer() throws IOException {
        int op = readByte();
        if (op != 'R' && op != 'N' && op != 'E') {
            throw unexpected(op);
        }
        readLong();
        readByte();
        return op;
    }

    private IOException unexpected(int op) throws IOException {
        if (op == 'X') {
            StringBuilder sb = new StringBuilder();
            int c;
            while ((c = readByte()) != '\n') {
                sb.append((char) c);
            }
            return new IOException("server error X: " + sb);
        }
        return new IOException("unexpected answer op 0x" + Integer.toHexString(op));
    }

    private long readLong() throws IOException {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | readByte();
        }
        return v;
    }

    private int readByte() throws IOException {
        if (rpos == rlim) {
            int n = in.read(rbuf, 0, rbuf.length);
            if (n < 0) {
                throw new IOException("server closed the session");
            }
            rpos = 0;
            rlim = n;
        }
        return rbuf[rpos++] & 0xFF;
    }

    static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
