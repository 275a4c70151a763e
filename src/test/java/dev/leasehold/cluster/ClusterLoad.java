package dev.leasehold.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.leasehold.cluster.ClusterWire.Answer;
import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.testing.support.Wait;

/**
 * Raw-protocol lock traffic against a three-node cluster, recorded in a {@link ClusterHistory}:
 * each worker acquires a random key of a few the workers share (wait 0 or 1 s, lease 1–2 s), holds
 * it a little and releases it; follows {@code X 8} hints; {@code X 9}, a broken session or no
 * answer make the Acquire Indeterminate (9.9). {@link #startReadersAndWriters} runs readers
 * ({@code S}, PROTOCOL.md section 13) and writers ({@code A}) on one key instead. Bounded: workers
 * stop on {@link #stop()}.
 */
final class ClusterLoad implements AutoCloseable {

    private static final List<String> KEYS = List.of("k0", "k1", "k2", "k3", "k4", "k5");

    private final List<InetSocketAddress> nodes;
    private final ClusterHistory history;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong nextOwner;
    private final List<Thread> workers = new ArrayList<>();
    private volatile String lastProbe = "";

    ClusterLoad(List<InetSocketAddress> nodes, ClusterHistory history, long firstOwner) {
        this.nodes = List.copyOf(nodes);
        this.history = history;
        this.nextOwner = new AtomicLong(firstOwner);
    }

    void start(int threads, long seed) {
        for (int w = 0; w < threads; w++) {
            startWorker(new Random(seed + w), "load-" + w, null, ClusterHistory.EXCLUSIVE);
        }
    }

    /**
     * {@code readers} workers taking shared grants ({@code S} with {@code limit}) and
     * {@code writers} taking exclusive ones, all on {@code key}.
     */
    void startReadersAndWriters(String key, int limit, int readers, int writers, long seed) {
        for (int w = 0; w < readers + writers; w++) {
            boolean reader = w < readers;
            startWorker(new Random(seed + w), (reader ? "reader-" : "writer-") + w, key,
                    reader ? limit : ClusterHistory.EXCLUSIVE);
        }
    }

    /** @param fixedKey the worker's one key, or null for a random one of {@link #KEYS} each time */
    private void startWorker(Random random, String name, String fixedKey, int limit) {
        Thread th = new Thread(() -> work(random, fixedKey, limit), name);
        th.setDaemon(true);
        th.start();
        workers.add(th);
    }

    /** Stops the workers and waits for them (each finishes its call within its read timeout). */
    void stop() throws InterruptedException {
        stop.set(true);
        for (Thread th : workers) {
            th.join(15_000);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    private void work(Random random, String fixedKey, int limit) {
        Session s = null;
        while (!stop.get()) {
            try {
                if (s == null) {
                    s = connectToLeader(random, 5_000);
                    if (s == null) {
                        continue;
                    }
                }
                String key = fixedKey != null ? fixedKey : KEYS.get(random.nextInt(KEYS.size()));
                int wait = random.nextInt(2);
                int lease = 1 + random.nextInt(2);
                long owner = nextOwner.getAndIncrement();
                history.sent();
                long sendStart = System.nanoTime();
                Answer a;
                try {
                    s.send(limit == ClusterHistory.EXCLUSIVE ? ClusterWire.acquire(wait, lease, owner, key)
                            : ClusterWire.sharedAcquire(wait, lease, owner, limit, key));
                    a = s.read(wait * 1000 + 6000);
                } catch (IOException e) {
                    history.outcome("indeterminate");
                    s.close();
                    s = null;
                    continue;
                }
                long seen = System.nanoTime();
                if (a.op() == 'X') {
                    history.outcome(a.code() == 8 ? "not-leader" : "indeterminate");
                    s.close();
                    s = null;
                    continue;
                }
                if (a.number() != owner) {
                    history.violation("answer " + (char) a.op() + " for owner " + a.number() + ", expected " + owner);
                    history.outcome("wrong");
                    continue;
                }
                if (a.op() == 'L') {
                    history.violation("L (limit " + a.code() + ") for a shared acquire with limit " + limit + " on " + key);
                    history.outcome("limit-mismatch");
                    continue;
                }
                if (a.op() != 'A') {
                    history.outcome(a.op() == 'T' ? "timed-out" : "busy");
                    continue;
                }
                history.outcome("acquired");
                history.granted(s.node, seen, a.token());
                long margin = Math.max(TimeUnit.MILLISECONDS.toNanos(50), (a.queuedMs() + lease * 1000L) * 10_000L);
                long validUntil = sendStart + TimeUnit.MILLISECONDS.toNanos(a.queuedMs() + lease * 1000L) - margin;
                if (seen >= validUntil) {
                    continue; // the delivery gate (9.7): never valid for us
                }
                long hold = TimeUnit.MILLISECONDS.toNanos(random.nextInt(200));
                long releaseAt = Math.min(seen + hold, validUntil);
                long sleep = releaseAt - System.nanoTime();
                if (sleep > 0) {
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(sleep), (int) (sleep % 1_000_000)); // the holder works: real time
                }
                long end = Math.min(validUntil, System.nanoTime()); // stop acting as holder, then release
                history.ticket(new ClusterHistory.Ticket(key, a.token(), s.node, seen, end, limit));
                try {
                    s.send(ClusterWire.release(a.token(), key));
                    Answer r = s.read(3000);
                    if (r.op() == 'X') {
                        s.close();
                        s = null;
                    }
                } catch (IOException e) {
                    s.close();
                    s = null; // the lease frees the key
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                history.violation(e.toString());
            }
        }
        if (s != null) {
            s.close();
        }
    }

    /** A session to the node that grants: follow {@code X 8} hints, else try the next node. */
    private Session connectToLeader(Random random, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int i = random.nextInt(nodes.size());
        long backoff = 50;
        while (System.nanoTime() < deadline && !stop.get()) {
            try {
                Session c = new Session(i);
                long owner = nextOwner.getAndIncrement();
                String probe = "probe-" + owner;
                c.send(ClusterWire.acquire(0, 1, owner, probe));
                Answer a = c.read(1500);
                if (a.op() == 'A') {
                    c.send(ClusterWire.release(a.token(), probe));
                    if (c.read(3000).op() == 'R') {
                        return c;
                    }
                }
                c.close();
                if (a.op() == 'X' && a.message().startsWith("leader=")) {
                    int hinted = indexOf(a.message().substring("leader=".length()));
                    if (hinted >= 0 && hinted != i) {
                        i = hinted;
                        continue;
                    }
                }
            } catch (IOException e) {
                // down, cut or paused: next node
            }
            i = (i + 1) % nodes.size();
            Thread.sleep(backoff); // back off before the next node: an election takes real time
            backoff = Math.min(500, backoff * 2);
        }
        return null;
    }

    private int indexOf(String hostPort) {
        for (int j = 0; j < nodes.size(); j++) {
            InetSocketAddress a = nodes.get(j);
            if (hostPort.equals(a.getHostString() + ":" + a.getPort())) {
                return j;
            }
        }
        return -1;
    }

    /**
     * One session to node {@code node}; remembers whether the node answered it (then it served it
     * as leader, and {@code X 8} on it is a violation) and records {@code X 9}.
     */
    final class Session implements AutoCloseable {
        final int node;
        private final Conn conn;
        private boolean served;

        Session(int node) throws IOException {
            this.node = node;
            this.conn = new Conn(nodes.get(node));
        }

        void send(byte[] frame) throws IOException {
            conn.send(frame);
        }

        Answer read(int timeoutMs) throws IOException {
            Answer a = conn.read(timeoutMs);
            if (a.op() == 'X') {
                if (a.code() == 9) {
                    history.x9(node, System.nanoTime());
                } else if (a.code() == 8 && served) {
                    history.violation("n" + (node + 1) + " sent X 8 on a session it had answered as leader");
                }
            } else {
                served = true;
            }
            return a;
        }

        @Override
        public void close() {
            conn.close();
        }
    }

    /**
     * Which node grants now: an Acquire of a private key on a fresh session to each node (released
     * at once), until one grants or the time is up; -1 if none did (then {@link #lastProbe()} says
     * what each node answered last, and the same line is printed).
     */
    int leader(long timeoutMs) throws InterruptedException {
        return leader(timeoutMs, -1);
    }

    /** As {@link #leader(long)}, never asking node {@code except} (a node cut off or paused). */
    int leader(long timeoutMs, int except) throws InterruptedException {
        try {
            // No node grants yet: an election takes real time, poll again.
            return Wait.until("a node to grant a fresh key" + (except < 0 ? "" : " (not asking n" + (except + 1) + ")"),
                    Duration.ofMillis(timeoutMs), Duration.ofMillis(50), () -> probeLeader(except), Wait.Seen::found).value();
        } catch (AssertionError e) {
            lastProbe = e.getMessage();
            System.out.println("ClusterLoad: " + lastProbe);
            return -1;
        }
    }

    /** Why the last {@link #leader(long)} that returned -1 gave up: each node's last answer, the time waited. */
    String lastProbe() {
        return lastProbe;
    }

    private Wait.Seen<Integer> probeLeader(int except) {
        StringBuilder seen = new StringBuilder();
        for (int i = 0; i < nodes.size(); i++) {
            if (i == except) {
                continue;
            }
            try (Conn c = new Conn(nodes.get(i))) {
                long owner = nextOwner.getAndIncrement();
                c.send(ClusterWire.acquire(0, 1, owner, "leader-probe-" + owner));
                Answer a = c.read(1500);
                if (a.op() == 'A') {
                    history.granted(i, System.nanoTime(), a.token());
                    return new Wait.Seen<>(i, "n" + (i + 1) + " granted");
                }
                seen.append('n').append(i + 1).append(" answered ").append(a).append("; ");
            } catch (IOException e) {
                seen.append('n').append(i + 1).append(' ').append(e).append("; "); // next
            }
        }
        return Wait.Seen.nothing(seen.toString());
    }
}
