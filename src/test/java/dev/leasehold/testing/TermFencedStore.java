package dev.leasehold.testing;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The resource an elected leader guards, fenced by the term as docs/election.md asks: a write
 * {@code W term identity} is accepted only if its term is at least the highest it has accepted, so a
 * leader paused past its term (GC, {@code SIGSTOP}) is refused when it wakes. On loopback, a thread
 * per connection; {@link #close()} ends them. Counts what it accepted per term and what it refused.
 */
public final class TermFencedStore implements AutoCloseable {

    private final ServerSocket socket;
    private final List<Socket> connections = new ArrayList<>();
    private final Map<Long, String> holderOfTerm = new TreeMap<>();
    private final Map<Long, Long> acceptedPerTerm = new TreeMap<>();
    private final List<String> problems = new ArrayList<>();
    /** Every accepted write: {term, System.nanoTime() when accepted}. */
    private final List<long[]> acceptedAt = new ArrayList<>();
    private long highest;
    private long refused;
    private boolean closed;

    private TermFencedStore(ServerSocket socket) {
        this.socket = socket;
    }

    /** A store on a free loopback port. */
    public static TermFencedStore start() throws IOException {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        TermFencedStore store = new TermFencedStore(s);
        Thread t = new Thread(store::accept, "term-fenced-store");
        t.setDaemon(true);
        t.start();
        return store;
    }

    public int port() {
        return socket.getLocalPort();
    }

    /** Writes refused for a stale term. */
    public synchronized long refused() {
        return refused;
    }

    /** Writes accepted, by term. */
    public synchronized Map<Long, Long> acceptedPerTerm() {
        return new TreeMap<>(acceptedPerTerm);
    }

    /**
     * Accepted writes that were stale: their term had ended, a later term of {@code timeline}
     * having started before the store accepted them. The fence refuses a stale write only once the
     * new leader has written; this counts what got through before that (the promise: none).
     */
    public synchronized long staleAccepted(ElectionTimeline timeline) {
        long stale = 0;
        for (long[] w : acceptedAt) {
            for (ElectionTimeline.Term t : timeline.terms()) {
                if (t.term() > w[0] && t.startNanos() < w[1]) {
                    stale++;
                    break;
                }
            }
        }
        return stale;
    }

    /** One term written by two identities (two leaders with one term): must stay empty. */
    public synchronized List<String> problems() {
        return new ArrayList<>(problems);
    }

    /** The fence: at least the highest term seen, and one identity per term. */
    synchronized boolean write(long term, String identity) {
        if (term < highest) {
            refused++;
            return false;
        }
        highest = term;
        String before = holderOfTerm.putIfAbsent(term, identity);
        if (before != null && !before.equals(identity)) {
            problems.add("term " + term + " written by " + before + " and " + identity);
        }
        acceptedPerTerm.merge(term, 1L, Long::sum);
        acceptedAt.add(new long[] {term, System.nanoTime()});
        return true;
    }

    private void accept() {
        while (true) {
            Socket c;
            try {
                c = socket.accept();
            } catch (IOException e) {
                return; // closed
            }
            synchronized (this) {
                if (closed) {
                    closeQuietly(c);
                    return;
                }
                connections.add(c);
            }
            Thread t = new Thread(() -> serve(c), "term-fenced-store-connection");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket c) {
        try (c; BufferedReader in = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
            OutputStream out = c.getOutputStream();
            for (String line; (line = in.readLine()) != null; ) {
                String[] w = line.split(" ", 3);
                boolean ok = w.length == 3 && w[0].equals("W") && write(Long.parseLong(w[1]), w[2]);
                out.write((ok ? "OK\n" : "STALE\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
        } catch (IOException e) {
            // the candidate died or the store closed
        }
    }

    @Override
    public void close() {
        List<Socket> open;
        synchronized (this) {
            closed = true;
            open = new ArrayList<>(connections);
        }
        closeQuietly(socket);
        open.forEach(TermFencedStore::closeQuietly);
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // closing
        }
    }

    /** A leader's connection to the store. */
    public static final class Connection implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final OutputStream out;

        private Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            this.out = socket.getOutputStream();
        }

        /** True if the store accepted the write, false if it refused a stale term. */
        public boolean write(long term, String identity) throws IOException {
            out.write(("W " + term + " " + identity + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            String answer = in.readLine();
            if (answer == null) {
                throw new IOException("the store closed the connection");
            }
            return answer.equals("OK");
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** Connects to the store on loopback {@code port}. */
    public static Connection connect(int port) throws IOException {
        return new Connection(new Socket(InetAddress.getLoopbackAddress(), port));
    }

    @Override
    public String toString() {
        return "TermFencedStore[accepted=" + acceptedPerTerm() + ", refused=" + refused() + "]";
    }
}
