package dev.leasehold.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.ProtocolException;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.RequestReader;
import dev.leasehold.protocol.RequestType;
import dev.leasehold.protocol.Wire;

/**
 * A fault-injecting TCP proxy for tests: listens on loopback port 0 and forwards each accepted
 * connection to {@code 127.0.0.1:targetPort}. Faults apply per direction, live, to every
 * connection: delay, stall (stop reading and forwarding, so TCP backpressure builds), cut after N
 * bytes (forward exactly N bytes of that direction, then close both sockets), swallow answers
 * (read and drop server-to-client bytes), refuse connections (close the listener, so connects are
 * refused; reopened on the same port), and accept-then-close. It parses the requests it forwards
 * to the server, so tests can count the Acquire frames the server received and see their owners
 * and wire waits.
 *
 * <p>Threads: one acceptor, and per connection a reader and a forwarder per direction; all are
 * daemons named {@code fault-proxy-*} and end on {@link #close()}.
 */
public final class FaultProxy implements AutoCloseable {

    /**
     * An Acquire frame forwarded to the server ({@code A}, {@code S} or {@code M}): its wait in
     * whole seconds (an {@code M}'s rounded up) and in milliseconds, and whether it was an {@code M}.
     */
    public record SeenAcquire(int connection, int waitSeconds, int leaseSeconds, long owner, String key,
            long forwardedAtNanos, long waitMillis, boolean milli) {
    }

    /** An answer read from the server (forwarded or swallowed). */
    public record SeenAnswer(int connection, Answer answer, long readAtNanos) {
    }

    /** Any request frame forwarded to the server. */
    public record SeenRequest(int connection, RequestType type, long tokenOrOwnerOrNonce, String key,
            long forwardedAtNanos) {
    }

    private volatile boolean refuseHello;
    private final java.util.concurrent.atomic.AtomicInteger hellosRefused = new java.util.concurrent.atomic.AtomicInteger();
    private final int targetPort;
    private final int receiveBuffer;
    private volatile ServerSocket listener;
    private final int port;
    private volatile boolean closed;

    private volatile long delayC2s;
    private volatile long delayS2c;
    private volatile boolean stallC2s;
    private volatile boolean stallS2c;
    private volatile long cutC2sAfter = -1;
    private volatile long cutS2cAfter = -1;
    private volatile boolean swallowAnswers;
    private volatile boolean closeNewConnections;
    private volatile long acceptDelay;

    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong bytesC2s = new AtomicLong();
    private final AtomicLong bytesS2c = new AtomicLong();
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final List<SeenRequest> requests = new CopyOnWriteArrayList<>();
    private final List<SeenAcquire> acquires = new CopyOnWriteArrayList<>();
    private final List<SeenAnswer> answers = new CopyOnWriteArrayList<>();
    private final AtomicInteger acquireStarts = new AtomicInteger();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();

    private FaultProxy(int targetPort, int receiveBuffer) throws IOException {
        this.targetPort = targetPort;
        this.receiveBuffer = receiveBuffer;
        this.listener = bind(0);
        this.port = listener.getLocalPort();
        startAcceptor(listener);
    }

    /** A proxy to {@code 127.0.0.1:targetPort}. */
    public static FaultProxy start(int targetPort) throws IOException {
        return new FaultProxy(targetPort, 0);
    }

    /**
     * A proxy whose client-facing sockets have a small receive buffer, so that a stalled
     * client-to-server direction blocks the client's writes sooner.
     */
    public static FaultProxy start(int targetPort, int receiveBufferBytes) throws IOException {
        return new FaultProxy(targetPort, receiveBufferBytes);
    }

    /** The loopback port clients connect to. */
    public int port() {
        return port;
    }

    /** {@code 127.0.0.1:port()}. */
    public InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /**
     * Plays a revision 1.3 server towards the client (PROTOCOL.md 14.1): a connection whose first
     * bytes are a Hello gets {@code X 1 unknown op 0x48} from the proxy and is closed, the Hello never
     * forwarded; connections that open otherwise are forwarded as usual.
     */
    public void refuseHello(boolean refuse) {
        refuseHello = refuse;
    }

    /** Hellos answered with {@code X 1} by {@link #refuseHello}. */
    public int hellosRefused() {
        return hellosRefused.get();
    }

    public void delayClientToServer(Duration d) {
        delayC2s = d.toNanos();
    }

    public void delayServerToClient(Duration d) {
        delayS2c = d.toNanos();
    }

    /** Stops (true) or resumes reading and forwarding client-to-server bytes. */
    public void stallClientToServer(boolean stall) {
        stallC2s = stall;
    }

    /** Stops (true) or resumes reading and forwarding server-to-client bytes. */
    public void stallServerToClient(boolean stall) {
        stallS2c = stall;
    }

    /**
     * Each connection forwards at most {@code bytes} client-to-server bytes and is cut when more
     * arrive; -1 = never.
     */
    public void cutClientToServerAfter(long bytes) {
        cutC2sAfter = bytes;
    }

    /**
     * Each connection forwards at most {@code bytes} server-to-client bytes and is cut when more
     * arrive; -1 = never.
     */
    public void cutServerToClientAfter(long bytes) {
        cutS2cAfter = bytes;
    }

    /** Reads and drops every server-to-client byte (true) or forwards them again. */
    public void swallowAnswers(boolean swallow) {
        swallowAnswers = swallow;
    }

    /**
     * Closes the listener so that new connections are refused (true), or listens again on the
     * same port (false). Open connections are not affected.
     */
    public void refuseConnections(boolean refuse) throws IOException {
        if (refuse) {
            ServerSocket l = listener;
            listener = null;
            if (l != null) {
                l.close();
            }
        } else if (listener == null && !closed) {
            ServerSocket l = bind(port);
            listener = l;
            startAcceptor(l);
        }
    }

    /**
     * Holds each new connection this long before it is connected to the server: the client's
     * TCP connect succeeds at once, but nothing goes through until then (a late connection).
     */
    public void acceptDelay(Duration d) {
        acceptDelay = d.toNanos();
    }

    /** Answers read from the server, in order. */
    public List<SeenAnswer> answers() {
        return List.copyOf(answers);
    }

    /** Accepts new connections and closes them at once, without contacting the server. */
    public void closeNewConnections(boolean close) {
        closeNewConnections = close;
    }

    /** Cuts every open connection (both sockets closed). */
    public void closeAllConnections() {
        for (Connection c : connections) {
            c.close();
        }
    }

    public int connectionsAccepted() {
        return accepted.get();
    }

    public int openConnections() {
        int n = 0;
        for (Connection c : connections) {
            if (!c.closed) {
                n++;
            }
        }
        return n;
    }

    /** True while connection {@code id} (1 = the first accepted) is open. */
    public boolean isOpen(int id) {
        for (Connection c : connections) {
            if (c.id == id) {
                return !c.closed;
            }
        }
        return false;
    }

    /** Bytes read from clients (whether or not forwarded). */
    public long bytesClientToServer() {
        return bytesC2s.get();
    }

    /** Bytes read from the server (whether or not forwarded). */
    public long bytesServerToClient() {
        return bytesS2c.get();
    }

    /** Acquire frames forwarded, complete, to the server, in order. */
    public List<SeenAcquire> acquires() {
        return List.copyOf(acquires);
    }

    /** Every complete request frame forwarded to the server, in order. */
    public List<SeenRequest> requests() {
        return List.copyOf(requests);
    }

    /** Acquire frames ({@code A} or {@code S}) of which at least the op byte was forwarded to the server. */
    public int acquireStarts() {
        return acquireStarts.get();
    }

    /** Acquire frames forwarded, complete, to the server. */
    public int acquireCount() {
        return acquires.size();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        refuseConnections(true);
        closeAllConnections();
        for (Thread t : threads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private ServerSocket bind(int port) throws IOException {
        ServerSocket l = new ServerSocket();
        l.setReuseAddress(true);
        if (receiveBuffer > 0) {
            l.setReceiveBufferSize(receiveBuffer);
        }
        l.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        return l;
    }

    private void startAcceptor(ServerSocket l) {
        thread("fault-proxy-" + port + "-accept", () -> {
            while (!l.isClosed()) {
                Socket client;
                try {
                    client = l.accept();
                } catch (IOException e) {
                    return;
                }
                int id = accepted.incrementAndGet();
                if (closeNewConnections) {
                    closeQuietly(client);
                    continue;
                }
                long hold = acceptDelay;
                if (hold > 0) {
                    thread("fault-proxy-" + port + "-" + id + "-held", () -> {
                        sleepNanos(hold);
                        connect(id, client);
                    });
                } else {
                    connect(id, client);
                }
            }
        });
    }

    private void connect(int id, Socket client) {
        Socket server = new Socket();
        try {
            server.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
            server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(server);
            return;
        }
        Connection c = new Connection(id, client, server);
        connections.add(c);
        if (closed) {
            c.close();
        }
        c.start();
    }

    private void thread(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        threads.removeIf(old -> !old.isAlive());
        threads.add(t);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // best effort
        }
    }

    private static void sleepNanos(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(nanos); // the injected delay itself: real time by design
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Chunk(byte[] bytes, long receivedAt) {
    }

    private static final Chunk END = new Chunk(new byte[0], 0);

    private final class Connection {
        final int id;
        final Socket client;
        final Socket server;
        volatile boolean closed;
        final RequestParser parser;
        final AnswerDecoder answerDecoder = new AnswerDecoder();

        Connection(int id, Socket client, Socket server) {
            this.id = id;
            this.client = client;
            this.server = server;
            this.parser = new RequestParser(id);
        }

        void start() {
            pump("c2s", client, server, true);
            pump("s2c", server, client, false);
        }

        private void decodeAnswers(byte[] buf, int n) {
            ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
            try {
                Answer a;
                while ((a = answerDecoder.next(bb)) != null) {
                    answers.add(new SeenAnswer(id, a, System.nanoTime()));
                }
            } catch (ProtocolException e) {
                // not a protocol stream: stop decoding, keep forwarding
            }
        }

        void close() {
            closed = true;
            closeQuietly(client);
            closeQuietly(server);
        }

        private void pump(String dir, Socket from, Socket to, boolean c2s) {
            LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
            String base = "fault-proxy-" + port + "-" + id + "-" + dir;
            thread(base + "-read", () -> {
                byte[] buf = new byte[8192];
                try {
                    InputStream in = from.getInputStream();
                    while (!closed) {
                        if (c2s ? stallC2s : stallS2c) {
                            sleepNanos(5_000_000);
                            continue;
                        }
                        int n = in.read(buf);
                        if (n < 0) {
                            break;
                        }
                        (c2s ? bytesC2s : bytesS2c).addAndGet(n);
                        if (!c2s) {
                            decodeAnswers(buf, n);
                        }
                        byte[] copy = new byte[n];
                        System.arraycopy(buf, 0, copy, 0, n);
                        queue.add(new Chunk(copy, System.nanoTime()));
                    }
                } catch (IOException e) {
                    // closed
                }
                queue.add(END);
            });
            thread(base + "-forward", () -> {
                long forwarded = 0;
                try {
                    OutputStream out = to.getOutputStream();
                    while (true) {
                        Chunk c = queue.take();
                        if (c == END) {
                            break;
                        }
                        sleepNanos(c.receivedAt + (c2s ? delayC2s : delayS2c) - System.nanoTime());
                        while ((c2s ? stallC2s : stallS2c) && !closed) {
                            sleepNanos(5_000_000);
                        }
                        if (closed) {
                            // held by a stall until the connection closed: never forwarded, so
                            // not recorded as received by the server either
                            break;
                        }
                        if (!c2s && swallowAnswers) {
                            continue;
                        }
                        byte[] bytes = c.bytes;
                        if (c2s && refuseHello && forwarded == 0 && bytes.length > 0
                                && bytes[0] == RequestType.HELLO.op()) {
                            hellosRefused.incrementAndGet();
                            OutputStream back = client.getOutputStream();
                            back.write("X\u0001unknown op 0x48\n".getBytes(StandardCharsets.US_ASCII));
                            back.flush();
                            Connection.this.close();
                            return;
                        }
                        long cut = c2s ? cutC2sAfter : cutS2cAfter;
                        boolean cutNow = cut >= 0 && forwarded + bytes.length > cut;
                        // a cut set after this connection forwarded more than it cuts at once
                        int len = cutNow ? (int) Math.max(0, cut - forwarded) : bytes.length;
                        if (c2s) {
                            // recorded just before the write: once written, the server may answer
                            // before this thread runs again, and tests look the request up then
                            parser.feed(bytes, len);
                        }
                        out.write(bytes, 0, len);
                        out.flush();
                        forwarded += len;
                        if (cutNow) {
                            Connection.this.close();
                            return;
                        }
                    }
                } catch (IOException | InterruptedException e) {
                    // closed
                }
                // one side ended: end the other so both ends see it
                Connection.this.close();
            });
        }
    }

    /** Records the requests a connection forwards, read with the protocol's {@link RequestReader}. */
    private final class RequestParser {
        private final int connection;
        private final RequestReader reader = new RequestReader(64 << 20); // any key a test sends
        private boolean broken;

        RequestParser(int connection) {
            this.connection = connection;
        }

        void feed(byte[] bytes, int len) {
            ByteBuffer in = ByteBuffer.wrap(bytes, 0, len);
            // one byte at a time so that an Acquire is counted as started at its first byte
            while (in.hasRemaining() && !broken) {
                byte op = in.get(in.position());
                if (!reader.hasPartialFrame() && (op == RequestType.ACQUIRE.op() || op == RequestType.SHARED_ACQUIRE.op()
                        || op == RequestType.MILLI_ACQUIRE.op())) {
                    acquireStarts.incrementAndGet();
                }
                int limit = in.limit();
                in.limit(in.position() + 1);
                try {
                    Request r = reader.next(in);
                    if (r != null) {
                        record(r);
                    }
                } catch (ProtocolException e) {
                    broken = true;
                }
                in.limit(limit);
            }
        }

        private void record(Request r) {
            long now = System.nanoTime();
            String key = r instanceof Request.Keyed k ? new String(k.key(), StandardCharsets.UTF_8) : null;
            long number = switch (r.type()) { // no default: a new request type must say what it records
                case ACQUIRE -> ((Request.Acquire) r).owner();
                case RELEASE -> ((Request.Release) r).token();
                case EXTEND -> ((Request.Extend) r).token();
                case CHECK -> ((Request.Check) r).token();
                case PING -> ((Request.Ping) r).nonce();
                case SHARED_ACQUIRE -> ((Request.SharedAcquire) r).owner();
                case MILLI_ACQUIRE -> ((Request.MilliAcquire) r).owner();
                case WITHDRAW -> ((Request.Withdraw) r).owner();
                case HELLO -> ((Request.Hello) r).revision();
                case OBSERVE -> ((Request.Observe) r).watch();
                case UNOBSERVE -> ((Request.Unobserve) r).watch();
                case SET_VALUE -> ((Request.SetValue) r).token();
            };
            if (r instanceof Request.Acquire a) {
                acquires.add(new SeenAcquire(connection, a.waitSeconds(), a.leaseSeconds(), a.owner(), key, now,
                        a.waitSeconds() * 1000L, false));
            } else if (r instanceof Request.SharedAcquire a) {
                // a shared acquire obeys every client rule of an Acquire (PROTOCOL.md 13.1): seen as one
                acquires.add(new SeenAcquire(connection, a.waitSeconds(), a.leaseSeconds(), a.owner(), key, now,
                        a.waitSeconds() * 1000L, false));
            } else if (r instanceof Request.MilliAcquire a) {
                // an M is the A or S it stands for (PROTOCOL.md 14.3)
                acquires.add(new SeenAcquire(connection, (int) ((a.waitMillis() + 999) / 1000), a.leaseSeconds(),
                        a.owner(), key, now, a.waitMillis(), true));
            }
            requests.add(new SeenRequest(connection, r.type(), number, key, now));
        }
    }

    /** The token of the {@code A} answer read for {@code owner}, or {@code null}. */
    public Long grantedToken(long owner) {
        for (SeenAnswer a : answers) {
            if (a.answer() instanceof Answer.Acquired g && g.owner() == owner) {
                return g.token();
            }
        }
        return null;
    }

    /** Tokens of the Release frames forwarded to the server. */
    public List<Long> releasedTokens() {
        List<Long> list = new ArrayList<>();
        for (SeenRequest r : requests) {
            if (r.type() == RequestType.RELEASE) {
                list.add(r.tokenOrOwnerOrNonce());
            }
        }
        return list;
    }

}
