package dev.leasehold.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerWriter;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.RequestReader;

/**
 * A tiny in-test lock server for unit-level client mechanics only (the semantics tests run
 * against the real server). One global lock; FIFO waiters; leases and waits on a timer; a
 * closed session's waiters are dropped. No limits, no Busy, no persistence.
 */
public final class FakeLockServer implements AutoCloseable {

    private final ServerSocket listener;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fake-lock-server-timer");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, KeyState> keys = new HashMap<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private long nextToken = 1;

    private static final class KeyState {
        long token;
        ScheduledFuture<?> leaseTimer;
        final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    }

    private record Waiter(Conn conn, long owner, int lease, long receivedAt, ScheduledFuture<?>[] timer) {
    }

    private final class Conn {
        final Socket socket;
        final OutputStream out;
        volatile boolean closed;

        Conn(Socket socket) throws IOException {
            this.socket = socket;
            this.out = socket.getOutputStream();
        }

        void send(Answer a) {
            if (closed) {
                return;
            }
            try {
                synchronized (out) {
                    out.write(AnswerWriter.encode(a));
                }
            } catch (IOException e) {
                closed = true;
            }
        }
    }

    private FakeLockServer() throws IOException {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "fake-lock-server-accept");
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    public static FakeLockServer start() throws IOException {
        return new FakeLockServer();
    }

    public int port() {
        return listener.getLocalPort();
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port());
    }

    /** The active token of {@code key}, or 0 if free. */
    public synchronized long holder(String key) {
        KeyState s = keys.get(key);
        return s == null ? 0 : s.token;
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
        timer.shutdownNow();
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket s = listener.accept();
                s.setTcpNoDelay(true);
                sockets.add(s);
                Conn c = new Conn(s);
                Thread t = new Thread(() -> readLoop(c), "fake-lock-server-conn");
                t.setDaemon(true);
                threads.add(t);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void readLoop(Conn c) {
        RequestReader reader = new RequestReader();
        byte[] buf = new byte[4096];
        try {
            InputStream in = c.socket.getInputStream();
            int n;
            while ((n = in.read(buf)) >= 0) {
                ByteBuffer bytes = ByteBuffer.wrap(buf, 0, n);
                Request r;
                while ((r = reader.next(bytes)) != null) {
                    handle(c, r);
                }
            }
        } catch (ProtocolException e) {
            c.send(new Answer.Error(1, e.getMessage()));
        } catch (IOException e) {
            // closed
        }
        c.closed = true;
        synchronized (this) {
            for (KeyState s : keys.values()) {
                s.waiters.removeIf(w -> w.conn == c);
            }
        }
        try {
            c.socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    /** No default: a new request type does not compile until the fake answers it. */
    private synchronized void handle(Conn c, Request r) {
        Answer now = switch (r.type()) {
            case ACQUIRE -> acquire(c, (Request.Acquire) r);
            case RELEASE -> release(c, (Request.Release) r);
            case EXTEND -> extend((Request.Extend) r);
            case CHECK -> check((Request.Check) r);
            case PING -> new Answer.Pong(((Request.Ping) r).nonce());
            // The fake speaks revision 1.2: it knows no S, as a 1.2 server answers it (PROTOCOL.md 13.9).
            case SHARED_ACQUIRE -> new Answer.Error(1, "unknown op 0x53");
            // Nor any frame of 1.4 (PROTOCOL.md 14.1: a 1.3 server answers H with X 1).
            case HELLO, MILLI_ACQUIRE, WITHDRAW, SET_VALUE, OBSERVE, UNOBSERVE -> new Answer.Error(1,
                    String.format("unknown op 0x%02X", r.type().op()));
        };
        if (now != null) {
            c.send(now);
        }
    }

    /** Grants (and answers) at once, or answers {@code T}, or queues: then returns null. */
    private Answer acquire(Conn c, Request.Acquire a) {
        String key = new String(a.key(), StandardCharsets.UTF_8);
        long owner = a.owner();
        KeyState s = keys.computeIfAbsent(key, k -> new KeyState());
        if (s.token == 0) {
            grant(key, s, c, owner, a.leaseSeconds(), System.nanoTime());
            return null;
        }
        if (a.waitSeconds() == 0) {
            return new Answer.TimedOut(owner);
        }
        ScheduledFuture<?>[] holder = new ScheduledFuture<?>[1];
        Waiter w = new Waiter(c, owner, a.leaseSeconds(), System.nanoTime(), holder);
        s.waiters.add(w);
        holder[0] = timer.schedule(() -> {
            synchronized (this) {
                if (s.waiters.remove(w)) {
                    c.send(new Answer.TimedOut(owner));
                }
            }
        }, a.waitSeconds(), TimeUnit.SECONDS);
        return null;
    }

    /** Answers {@code R} before the hand-off, whose {@code A} may go to the same connection. */
    private Answer release(Conn c, Request.Release rel) {
        long token = rel.token();
        KeyState s = keys.get(new String(rel.key(), StandardCharsets.UTF_8));
        if (s != null && s.token == token && token != 0) {
            c.send(new Answer.Released(token));
            s.leaseTimer.cancel(false);
            handOver(new String(rel.key(), StandardCharsets.UTF_8), s);
            return null;
        }
        return new Answer.NotHeld(token);
    }

    private Answer extend(Request.Extend e) {
        long token = e.token();
        String key = new String(e.key(), StandardCharsets.UTF_8);
        KeyState s = keys.get(key);
        if (s != null && s.token == token && token != 0) {
            long remaining = s.leaseTimer.getDelay(TimeUnit.NANOSECONDS);
            if (e.leaseSeconds() * 1_000_000_000L > remaining) {
                s.leaseTimer.cancel(false);
                s.leaseTimer = timer.schedule(() -> expire(key, s, token), e.leaseSeconds(), TimeUnit.SECONDS);
            }
            return new Answer.Extended(token);
        }
        return new Answer.NotHeld(token);
    }

    private Answer check(Request.Check k) {
        KeyState s = keys.get(new String(k.key(), StandardCharsets.UTF_8));
        boolean current = s != null && s.token == k.token() && k.token() != 0;
        return current ? new Answer.Current(k.token()) : new Answer.NotHeld(k.token());
    }

    private void grant(String key, KeyState s, Conn c, long owner, int lease, long receivedAt) {
        long token = nextToken++;
        s.token = token;
        s.leaseTimer = timer.schedule(() -> expire(key, s, token), lease, TimeUnit.SECONDS);
        c.send(new Answer.Acquired(owner, token, (System.nanoTime() - receivedAt) / 1_000_000));
    }

    private synchronized void expire(String key, KeyState s, long token) {
        if (s.token == token) {
            handOver(key, s);
        }
    }

    private void handOver(String key, KeyState s) {
        s.token = 0;
        Waiter w;
        while ((w = s.waiters.poll()) != null) {
            if (!w.conn.closed) {
                w.timer[0].cancel(false);
                grant(key, s, w.conn, w.owner, w.lease, w.receivedAt);
                return;
            }
        }
    }
}
