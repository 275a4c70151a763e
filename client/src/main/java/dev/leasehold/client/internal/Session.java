package dev.leasehold.client.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.AnswerDecoder;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.ProtocolException;

/**
 * One TCP connection to a server, with a writer thread and a reader thread: the write queue and
 * the I/O of a session. Setting the connection up (TCP, TLS, the opening ping) is its
 * {@link Connector}'s job; which request an answer belongs to is its {@link Correlator}'s.
 *
 * <p>The <b>writer</b> has the connector set the connection up (the session is "up" only once the
 * opening Hello's answer, or Ping's Pong, arrives within the connect timeout; a Hello answered
 * makes it a revision 1.4 session, {@link #maxWaitMillis()}), then drains the queue: for each request
 * it checks the time left and computes the wire wait, registers it for its answer, marks it
 * possibly sent, and then writes the batch. A blocking caller that finds the session up, idle
 * and its queue empty takes those same steps itself ({@link #enqueue(Outbound, boolean)}): one
 * thread writes at a time. The <b>reader</b> decodes answers and hands each to
 * its request (owner for Acquire, FIFO per token for Release/Extend, nonce for Ping).
 *
 * <p>Threading: queue and phase are guarded by {@code lock} (the correlator's tables by its own
 * monitor, taken inside {@code lock} only to close them with the phase). The session never calls
 * out (into requests or the pool) while holding it. {@link #close} is idempotent,
 * callable from any thread, and settles every request the session held: possibly sent ones are
 * told they are lost (or, after a cluster follower's {@code X 8}, that they were not executed),
 * queued ones go back to the pool.
 */
public final class Session implements Link {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");
    private static final int MAX_BATCH = 256;

    private enum Phase { CONNECTING, UP, CLOSED }

    private final Engine engine;
    private final SessionPool pool;
    private final int slot;
    private final InetSocketAddress address;
    private final String name;
    private final Connector connector;
    private final Thread writer;

    private final Object lock = new Object();
    private Phase phase = Phase.CONNECTING;
    private final ArrayDeque<Outbound<?>> queue = new ArrayDeque<>();
    private final Correlator correlator = new Correlator(this);
    private Socket socket;
    /** The session's output once connected; written by one thread at a time (see {@link #outputBusy}). */
    private OutputStream out;
    /**
     * True while a thread writes to {@link #out}: the writer with a batch, or a blocked caller
     * writing its own request inline ({@link #enqueue(Outbound, boolean)}). Guarded by {@code lock}.
     */
    private boolean outputBusy;
    /** Requests their blocked callers wrote themselves (diagnostics and tests). Guarded by {@code lock}. */
    private long inlineWrites;
    private Thread reader;
    private String closeReason;
    /** The server's answer to the opening Hello, or null: a 1.3 session (PROTOCOL.md 9.13). */
    private volatile dev.leasehold.protocol.Answer.Hello hello;
    /** The server answered the opening Hello with {@code X 1} (a 1.3 server); set before the close. */
    private volatile boolean helloRefused;

    Session(Engine engine, SessionPool pool, int slot, InetSocketAddress address, String name) {
        this.engine = engine;
        this.pool = pool;
        this.slot = slot;
        this.address = address;
        this.name = name;
        this.connector = new Connector(engine.config(), address);
        this.writer = Threads.start(name + "-writer", this::writeLoop, false);
    }

    void start() {
        writer.start();
    }

    int slot() {
        return slot;
    }

    /** The server address this session connects to. */
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public String toString() {
        return name + "->" + address;
    }

    @Override
    public long maxWaitMillis() {
        Answer.Hello h = hello;
        return h == null ? -1 : h.maxWaitMillis();
    }

    @Override
    public int maxValueBytes() {
        Answer.Hello h = hello;
        return h == null ? -1 : h.maxValueBytes();
    }

    /** True when this session opened with a Hello that the server answered (it speaks 1.4). */
    public boolean speaks14() {
        return hello != null;
    }

    /** True when the server answered this session's opening Hello with {@code X 1}. */
    boolean helloRefused() {
        return helloRefused;
    }

    @Override
    public boolean sendHere(Outbound<?> o) {
        return enqueue(o);
    }

    boolean isUp() {
        synchronized (lock) {
            return phase == Phase.UP;
        }
    }

    boolean isClosed() {
        synchronized (lock) {
            return phase == Phase.CLOSED;
        }
    }

    /** Requests that their blocked callers wrote on their own thread, bypassing the writer (diagnostics). */
    public long inlineWrites() {
        synchronized (lock) {
            return inlineWrites;
        }
    }

    /** Requests queued or awaiting an answer here. */
    int load() {
        synchronized (lock) {
            return queue.size() + correlator.size();
        }
    }

    /** Queues a request for the writer; false if the session has closed. */
    boolean enqueue(Outbound<?> o) {
        return enqueue(o, false);
    }

    /**
     * Queues a request for the writer, or, if {@code callerWrites} and the session is idle (up,
     * nothing queued, nobody writing, no answer awaited), writes it on the calling thread: the
     * blocked caller would otherwise only wake the writer and wait, so writing itself saves a
     * thread hand-off. Only when idle: with requests in flight, the writer packs the requests of
     * many callers into one write, and callers writing one frame each cost more than the hop they
     * save (measured: bench/NOTES.md, "The caller-written request"). The
     * inline write takes exactly the writer's steps (time read just before the write, wire wait
     * recomputed from it, registered, possibly sent, written), so PROTOCOL.md 9.4's sent/not-sent
     * bookkeeping does not depend on which thread wrote. False if the session has closed.
     *
     * @param callerWrites the caller is a blocking call that waits for the answer anyway (never an
     *        async call: its thread may be someone's event loop, 9.11)
     */
    boolean enqueue(Outbound<?> o, boolean callerWrites) {
        OutputStream direct;
        synchronized (lock) {
            if (phase == Phase.CLOSED) {
                return false;
            }
            // An interrupted thread does not write: on some threads (virtual ones) an interrupt
            // during socket I/O closes the socket, which would end every request of the session.
            if (!callerWrites || phase != Phase.UP || outputBusy || !queue.isEmpty()
                    || correlator.size() > 0 || Thread.currentThread().isInterrupted()) {
                queue.add(o);
                lock.notifyAll();
                return true;
            }
            outputBusy = true;
            inlineWrites++;
            direct = out;
        }
        writeInline(o, direct);
        return true;
    }

    /**
     * One request written by its caller, as {@link #drain} writes a batch. A blocked write (the
     * server stopped reading) is ended like the writer's: at the call's deadline its timer closes
     * this session (9.8), which closes the socket under the write.
     */
    private void writeInline(Outbound<?> o, OutputStream direct) {
        boolean notSent = false;
        String failure = null;
        try {
            byte[] frame = o.beginWrite(this, engine.ticker().nanoTime());
            if (frame == Outbound.NOT_SENT) {
                notSent = true; // the session closed meanwhile
            } else if (frame != Outbound.SKIP) {
                try {
                    direct.write(frame);
                    o.written(this);
                } catch (IOException e) {
                    failure = "write failed: " + e.getMessage();
                }
            }
        } finally {
            synchronized (lock) {
                outputBusy = false;
                if (!queue.isEmpty()) {
                    lock.notifyAll(); // requests queued while this thread wrote: the writer takes them
                }
            }
        }
        if (failure != null) {
            close(failure);
        }
        if (notSent) {
            o.notSent(this);
        }
    }

    @Override
    public boolean register(Outbound<?> o) {
        return correlator.register(o);
    }

    @Override
    public void close(String reason) {
        close(reason, false);
    }

    /**
     * @param notExecuted the server said none of this session's requests was executed
     *        ({@code X 8}): the requests awaiting an answer are told {@link Outbound#notExecuted}
     *        instead of {@link Outbound#lost}
     */
    private void close(String reason, boolean notExecuted) {
        close(reason, notExecuted, null);
    }

    /**
     * @param forbidden the message of an {@code X 7}: the requests whose key it names exactly are
     *        told {@link Outbound#forbidden}; the others follow section 9 as for any broken session
     */
    private void close(String reason, boolean notExecuted, String forbidden) {
        List<Outbound<?>> unsent;
        List<Outbound<?>> lost;
        boolean wasUp;
        Socket s;
        synchronized (lock) {
            if (phase == Phase.CLOSED) {
                return;
            }
            wasUp = phase == Phase.UP;
            phase = Phase.CLOSED;
            closeReason = reason;
            unsent = new ArrayList<>(queue);
            queue.clear();
            // with the phase, atomically: a request that registers after this learns it was not sent
            lost = correlator.close();
            s = socket;
            lock.notifyAll();
        }
        LOG.log(System.Logger.Level.DEBUG, () -> this + " closed: " + reason);
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        if (!wasUp) {
            pool.setupFailed(this, reason);
        }
        pool.ended(this, wasUp);
        for (Outbound<?> o : lost) {
            if (forbidden != null && o.key() != null && ErrorCode.forbids(forbidden, o.key())) {
                o.forbidden(this, reason);
            } else if (notExecuted) {
                o.notExecuted(this, reason);
            } else {
                o.lost(this, reason);
            }
        }
        for (Outbound<?> o : unsent) {
            o.notSent(this);
        }
    }

    /** Waits for both threads to end, up to {@code deadline} (nanoTime). */
    void join(long deadline) throws InterruptedException {
        Thread r;
        synchronized (lock) {
            r = reader;
        }
        joinOne(writer, deadline);
        if (r != null) {
            joinOne(r, deadline);
        }
    }

    boolean threadsAlive() {
        Thread r;
        synchronized (lock) {
            r = reader;
        }
        return writer.isAlive() || (r != null && r.isAlive());
    }

    private static void joinOne(Thread t, long deadline) throws InterruptedException {
        long left = deadline - System.nanoTime();
        if (left > 0 && t != Thread.currentThread() && t.getState() != Thread.State.NEW) {
            t.join(Math.max(1, left / 1_000_000));
        }
    }

    private void writeLoop() {
        Socket s = new Socket();
        synchronized (lock) {
            if (phase == Phase.CLOSED) {
                return;
            }
            socket = s; // close() closes it, which aborts the connector's every step
        }
        Connector.Established io;
        try {
            io = connector.connect(s, engine.nextNonce(), pool.asksHello(address),
                    a -> dispatch(a, engine.ticker().nanoTime()));
        } catch (Connector.HelloRefused e) {
            helloRefused = true;
            close(e.getMessage());
            return;
        } catch (Connector.Failed e) {
            close(e.getMessage());
            return;
        }
        synchronized (lock) {
            if (phase == Phase.CLOSED) {
                return;
            }
            out = io.out();
            hello = io.hello();
            phase = Phase.UP;
            reader = Threads.start(name + "-reader", () -> readLoop(io.in()), true);
        }
        pool.up(this);
        drain(io.out());
    }

    private void drain(OutputStream out) {
        List<Outbound<?>> batch = new ArrayList<>(MAX_BATCH);
        List<Outbound<?>> writing = new ArrayList<>(MAX_BATCH);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(8192);
        while (true) {
            synchronized (lock) {
                try {
                    while ((queue.isEmpty() || outputBusy) && phase != Phase.CLOSED) {
                        lock.wait();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                if (phase == Phase.CLOSED) {
                    return;
                }
                while (!queue.isEmpty() && batch.size() < MAX_BATCH) {
                    batch.add(queue.poll());
                }
                outputBusy = true;
            }
            long now = engine.ticker().nanoTime();
            for (Outbound<?> o : batch) {
                byte[] frame = o.beginWrite(this, now);
                if (frame == Outbound.NOT_SENT) {
                    o.notSent(this); // the session closed meanwhile
                } else if (frame != Outbound.SKIP) {
                    bytes.write(frame, 0, frame.length);
                    writing.add(o);
                }
            }
            batch.clear();
            if (!writing.isEmpty()) {
                try {
                    bytes.writeTo(out); // one write of the batch, without copying it first
                } catch (IOException e) {
                    close("write failed: " + e.getMessage());
                    return;
                }
                for (Outbound<?> o : writing) {
                    o.written(this);
                }
            }
            writing.clear();
            bytes.reset();
            synchronized (lock) {
                outputBusy = false; // at once: a caller that finds the output free may write itself
            }
        }
        close("the writer was interrupted");
    }

    private void readLoop(InputStream in) {
        AnswerDecoder decoder = new AnswerDecoder();
        byte[] buf = new byte[16384];
        try {
            while (true) {
                int n = in.read(buf);
                if (n < 0) {
                    close("the server closed the connection");
                    return;
                }
                long receivedAt = engine.ticker().nanoTime();
                ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                Answer a;
                while ((a = decoder.next(bb)) != null) {
                    if (!dispatch(a, receivedAt)) {
                        return;
                    }
                }
            }
        } catch (IOException e) {
            close("connection failed: " + e.getMessage());
        } catch (ProtocolException e) {
            close("the server sent an invalid answer: " + e.getMessage());
        }
    }

    /** Hands an answer to its request; false when the session is over. */
    private boolean dispatch(Answer a, long receivedAt) {
        if (a instanceof Answer.Error x) {
            if (x.code() == ErrorCode.NOT_LEADER.code()) {
                // A cluster follower: nothing of this session was executed (9.12). The pool
                // learns the hint first, so the requests resent by close() go towards the leader.
                pool.notLeader(this, x.message());
                close("the server is not the cluster leader ("
                        + (x.message().isEmpty() ? "no leader known" : x.message()) + ")", true);
            } else if (x.code() == ErrorCode.FORBIDDEN.code()) {
                // The server names the key it refused: that request was never executed (section 4).
                close("the server sent error 7: " + x.message(), false, x.message());
            } else {
                close("the server sent error " + x.code() + ": " + x.message());
            }
            return false;
        }
        correlator.dispatch(a, receivedAt);
        return true;
    }
}
