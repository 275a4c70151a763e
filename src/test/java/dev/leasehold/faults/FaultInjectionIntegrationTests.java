package dev.leasehold.faults;

import static dev.leasehold.testing.ServerProcess.props;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.ExtendOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Ticket;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Seeds;

/**
 * A Jepsen-style fault-injection run of our own: real server processes, the official client,
 * and a harness that breaks things while clients take and release locks on a few keys with
 * 2–3 s leases.
 *
 * <h2>Faults</h2>
 * The server is killed ({@code kill -9}) or stopped (SIGTERM), in turn, every 10–16 s and restarted on the
 * same data directory and port, with {@code leasehold.recovery-grace: auto}. Between server
 * faults, every 0.4–2 s: a client is killed (its {@link LeaseholdClient} closed under it and
 * replaced), a client is paused past its lease while holding a lock (then writes with its old
 * token, as a process waking from a GC pause would), a raw session is cut in the middle of an
 * Acquire frame, or a raw session queues Acquires and closes.
 *
 * <h2>Checks</h2>
 * <ul>
 * <li>A <b>fenced register</b> per key, which refuses a token lower than the highest it has seen.
 * Workers write only while their ticket is valid (checked under the register's lock, with the
 * register's clock): a refused write by a valid ticket is a violation. Paused clients write
 * without checking: a refusal is fencing doing its job, not a violation.</li>
 * <li><b>Validity intervals</b> (PROTOCOL.md 9.6): from delivery of a ticket to its release or
 * {@code validUntil}, no two tickets of a key overlap, across restarts too.</li>
 * <li><b>Tokens grow across restarts</b>: every token granted to an Acquire sent after a
 * restart is above every token delivered before the stop; no token is delivered twice.</li>
 * <li><b>Nothing granted during a grace</b>: no ticket from an Acquire sent after a start is
 * delivered before the start plus its logged grace.</li>
 * <li><b>The grace follows the leases</b>: after a first start none, otherwise at most the
 * longest lease (3 s) plus the look-ahead (10 s) plus 1 s; never "missing horizon".</li>
 * <li><b>Liveness</b>: after every restart that is followed by enough quiet, every key is granted
 * again within the grace plus a generous margin (2 noisy cores: JVM start-up, client backoff).</li>
 * </ul>
 *
 * <p>Sized for {@code ./mvnw verify} (75 s of faults, then a quiet tail). Longer runs:
 * {@code -Dleasehold.faults.seconds=1200 -Dleasehold.faults.client-fault-millis=300}. The seed is
 * printed; rerun with {@code -Dleasehold.seed=N} (timing still differs between runs: the
 * seed fixes the choices, not the scheduler).
 */
@FaultRun
class FaultInjectionIntegrationTests {

    static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    static final long S = TimeUnit.SECONDS.toNanos(1);
    static final String[] KEYS = {"jepsen/a", "jepsen/b", "jepsen/c", "jepsen/d"};
    static final int WORKERS = 5;
    static final int MAX_LEASE = 3;
    /** Longest lease in use + the default look-ahead (10 s) + 1 s of rounding and restart noise. */
    static final long MAX_GRACE_MS = (MAX_LEASE + 10 + 1) * 1000L;
    /** After a start and its grace: how long every key may take to be granted again. */
    static final long LIVENESS_MARGIN_MS = Long.getLong("leasehold.faults.liveness-margin-millis", 25_000);

    enum Fault {
        SERVER_KILL9, SERVER_SIGTERM, CLIENT_KILL, CLIENT_PAUSE, SESSION_CUT_MID_FRAME, SESSION_CLOSED_WITH_QUEUED
    }

    /** One delivered ticket, as its worker saw it: valid from delivery to {@link #endNanos()}. */
    static final class Held {
        final String key;
        final long token;
        final long sentNanos;
        final long deliveredNanos;
        private long endNanos;
        private boolean stopped;

        Held(String key, long token, long sentNanos, long deliveredNanos, long validUntilNanos) {
            this.key = key;
            this.token = token;
            this.sentNanos = sentNanos;
            this.deliveredNanos = deliveredNanos;
            this.endNanos = validUntilNanos;
        }

        synchronized long endNanos() {
            return endNanos;
        }

        /** The holder stops acting at {@code at} (release begins, client killed, pause), if earlier. */
        synchronized void stop(long at) {
            stopped = true;
            if (at - endNanos < 0) {
                endNanos = at;
            }
        }

        /** An Extend moved the ticket's validity forward, unless the holder already stopped. */
        synchronized void extendedTo(long validUntilNanos) {
            if (!stopped && validUntilNanos - endNanos > 0) {
                endNanos = validUntilNanos;
            }
        }
    }

    /** One server process's life. */
    record Run(int index, ServerProcess process, long launchedNanos, long listeningNanos, long graceMillis,
            String reason, Fault endedBy, long stoppedNanos) {
    }

    /**
     * The guarded resource: per key, the highest token written. Refuses lower tokens. Checked
     * writes (ticket valid at the register's own instant) that it must refuse are violations.
     */
    final class FencedRegister {
        private final Map<String, Long> highest = new ConcurrentHashMap<>();
        final AtomicLong accepted = new AtomicLong();
        final AtomicLong lateSkipped = new AtomicLong();
        final AtomicLong fencedZombies = new AtomicLong();
        final AtomicLong zombiesAccepted = new AtomicLong();

        synchronized void checkedWrite(String key, Ticket ticket) {
            long now = System.nanoTime();
            if (now - ticket.validUntilNanos() >= 0) {
                lateSkipped.incrementAndGet(); // the holder checks first: it would not act now
                return;
            }
            long top = highest.getOrDefault(key, 0L);
            if (ticket.token() < top) {
                violation("fenced register: valid ticket " + ticket.token() + " of " + key + " after token " + top
                        + " was written (two valid holders)");
                return;
            }
            highest.put(key, ticket.token());
            accepted.incrementAndGet();
        }

        /** A write by a holder that checked its ticket before a pause, not after. */
        synchronized void zombieWrite(String key, long token) {
            long top = highest.getOrDefault(key, 0L);
            if (token < top) {
                fencedZombies.incrementAndGet();
            } else {
                highest.put(key, token);
                zombiesAccepted.incrementAndGet();
            }
        }
    }

    final long seed = Seeds.seed("FaultInjectionIntegrationTests");
    final long runSeconds = Long.getLong("leasehold.faults.seconds", 75);
    final long clientFaultMillis = Long.getLong("leasehold.faults.client-fault-millis", 1200);
    final Random harnessRandom = new Random(seed);
    final List<String> violations = new CopyOnWriteArrayList<>();
    final List<Held> history = new CopyOnWriteArrayList<>();
    final List<Run> runs = new CopyOnWriteArrayList<>();
    final Map<Fault, AtomicLong> faults = new EnumMap<>(Fault.class);
    final FencedRegister register = new FencedRegister();
    final AtomicLong outcomesTimedOut = new AtomicLong();
    final AtomicLong outcomesBusy = new AtomicLong();
    final AtomicLong outcomesIndeterminate = new AtomicLong();
    final AtomicLong outcomesUnavailable = new AtomicLong();
    final AtomicLong extendsDone = new AtomicLong();
    volatile boolean stopping;
    int port;

    void violation(String what) {
        violations.add(what);
        System.out.println("VIOLATION: " + what);
    }

    @Test
    void locksStaySafeAndComeBackWhileServersCrashRestartAndClientsMisbehave() throws Exception {
        for (Fault f : Fault.values()) {
            faults.put(f, new AtomicLong());
        }
        System.out.printf("fault injection: seed %d (rerun with -Dleasehold.seed=%d), %d s of faults%n",
                seed, seed, runSeconds);
        Path dataDir = Files.createTempDirectory("leasehold-faults");
        port = Ports.free(); // the same port across restarts
        List<Worker> workers = new ArrayList<>();
        AtomicReference<ServerProcess> current = new AtomicReference<>();
        try {
            startServer(dataDir, null, current);
            for (int i = 0; i < WORKERS; i++) {
                Worker w = new Worker(i, new Random(seed * 31 + i));
                workers.add(w);
                w.thread.start();
            }
            long start = System.nanoTime();
            long faultsUntil = start + runSeconds * S;
            long nextServerFault = start + (10 + harnessRandom.nextInt(7)) * S;
            boolean kill = harnessRandom.nextBoolean(); // then alternating: both kinds in every run
            while (System.nanoTime() - faultsUntil < 0) {
                long pause = clientFaultMillis / 3 + harnessRandom.nextLong(clientFaultMillis * 4 / 3);
                Thread.sleep(pause); // real time must pass between faults: the system runs meanwhile
                long now = System.nanoTime();
                // No server fault in the last 30 s of the fault phase would leave too little quiet;
                // the quiet tail below gives the last restart its liveness window.
                if (now - nextServerFault >= 0 && faultsUntil - now > 5 * S) {
                    restart(dataDir, kill ? Fault.SERVER_KILL9 : Fault.SERVER_SIGTERM, current);
                    kill = !kill;
                    nextServerFault = System.nanoTime() + (10 + harnessRandom.nextInt(7)) * S;
                } else {
                    clientFault(workers);
                }
            }
            // Quiet tail: long enough for the last restart's grace and every key to come back.
            Run last = runs.get(runs.size() - 1);
            long quietUntil = last.listeningNanos() + (last.graceMillis() + LIVENESS_MARGIN_MS) * MS;
            while (System.nanoTime() - quietUntil < 0 && !allKeysGrantedAfter(last)) {
                Thread.sleep(100); // waiting for the workers to get every key again
            }
        } finally {
            stopping = true;
            for (Worker w : workers) {
                w.kill();
            }
            for (Worker w : workers) {
                w.thread.join(15_000);
            }
            ServerProcess p = current.get();
            if (p != null) {
                p.close();
            }
            for (Run r : runs) {
                r.process().close();
            }
            TestServer.deleteTree(dataDir);
        }
        analyse();
        report();
        assertThat(violations).as("violations (seed %d)", seed).isEmpty();
    }

    // ---------------------------------------------------------------- server faults

    private void startServer(Path dataDir, Fault previousEnd, AtomicReference<ServerProcess> current)
            throws IOException {
        long launched = System.nanoTime();
        ServerProcess p = ServerProcess.start(dataDir, props("leasehold.port", Integer.toString(port),
                "leasehold.recovery-grace", "auto", "leasehold.drain-timeout", "3s"));
        long listening = System.nanoTime();
        current.set(p);
        runs.add(new Run(runs.size(), p, launched, listening, p.graceMillis(), p.graceReason(), null, 0));
    }

    private void restart(Path dataDir, Fault kind, AtomicReference<ServerProcess> current) throws Exception {
        ServerProcess p = current.get();
        if (kind == Fault.SERVER_KILL9) {
            p.kill9();
        } else {
            Integer exit = p.terminate(20_000);
            if (exit == null) {
                violation("server did not exit within 20 s of SIGTERM");
                p.kill9();
            }
        }
        long stopped = System.nanoTime();
        faults.get(kind).incrementAndGet();
        Run ended = runs.remove(runs.size() - 1);
        runs.add(new Run(ended.index(), ended.process(), ended.launchedNanos(), ended.listeningNanos(),
                ended.graceMillis(), ended.reason(), kind, stopped));
        startServer(dataDir, kind, current);
    }

    // ---------------------------------------------------------------- client faults

    private void clientFault(List<Worker> workers) {
        int pick = harnessRandom.nextInt(4);
        Worker w = workers.get(harnessRandom.nextInt(workers.size()));
        String key = KEYS[harnessRandom.nextInt(KEYS.length)];
        switch (pick) {
            case 0 -> {
                faults.get(Fault.CLIENT_KILL).incrementAndGet();
                w.kill();
            }
            case 1 -> {
                faults.get(Fault.CLIENT_PAUSE).incrementAndGet();
                w.pauseNextHold = true;
            }
            case 2 -> {
                faults.get(Fault.SESSION_CUT_MID_FRAME).incrementAndGet();
                rawSession(key, true);
            }
            default -> {
                faults.get(Fault.SESSION_CLOSED_WITH_QUEUED).incrementAndGet();
                rawSession(key, false);
            }
        }
    }

    /**
     * A raw session that either sends part of an Acquire and vanishes, or queues Acquires
     * (wait 20 s) and closes with them still queued. Connection failures while the server is
     * down are part of the game.
     */
    private void rawSession(String key, boolean midFrame) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            OutputStream out = s.getOutputStream();
            byte[] k = key.getBytes(UTF_8);
            ByteBuffer frame = ByteBuffer.allocate(12 + k.length);
            frame.put((byte) 'A').put((byte) (midFrame ? 0 : 20)).put((byte) MAX_LEASE)
                    .putLong(harnessRandom.nextLong()).put(k).put((byte) '\n');
            byte[] bytes = frame.array();
            if (midFrame) {
                out.write(bytes, 0, 1 + harnessRandom.nextInt(bytes.length - 1));
            } else {
                out.write(bytes);
                out.write(bytes);
            }
            out.flush();
            Thread.sleep(harnessRandom.nextInt(100)); // let the server read it before the close
            s.setSoLinger(true, 0); // a reset, as a crashed peer's kernel would send
        } catch (IOException down) {
            // the server is restarting
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- workers

    static ClientOptions clientOptions(int id) {
        return ClientOptions.builder().poolSize(1).connectTimeout(Duration.ofMillis(500))
                .threadNamePrefix("faults-client-" + id).build();
    }

    final class Worker implements Runnable {
        final int id;
        final Random random;
        final Thread thread;
        volatile LeaseholdClient client;
        volatile boolean pauseNextHold;
        volatile Held holding;

        Worker(int id, Random random) {
            this.id = id;
            this.random = random;
            this.client = newClient();
            this.thread = new Thread(this, "faults-worker-" + id);
            this.thread.setDaemon(true);
        }

        private LeaseholdClient newClient() {
            return LeaseholdClient.create(clientOptions(id), List.of(new InetSocketAddress("127.0.0.1", port)));
        }

        /** Kills this client (as a crashed client process): closed under the worker, its holding ends now. */
        void kill() {
            LeaseholdClient c = client;
            killedClients.add(c);
            Held h = holding;
            if (h != null) {
                h.stop(System.nanoTime());
            }
            c.close();
        }

        @Override
        public void run() {
            while (!stopping) {
                LeaseholdClient c = client;
                if (killedClients.contains(c)) {
                    client = newClient(); // the "restarted client process"
                    continue;
                }
                try {
                    once(c);
                } catch (IllegalStateException closedUnderUs) {
                    // killed mid-call: kill() ended the holding
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void once(LeaseholdClient c) throws InterruptedException {
            String key = KEYS[random.nextInt(KEYS.length)];
            int wait = random.nextInt(5);
            int lease = 2 + random.nextInt(MAX_LEASE - 1);
            long sent = System.nanoTime();
            AcquireOutcome outcome = c.acquire(key, wait, lease);
            if (outcome instanceof AcquireOutcome.Acquired a) {
                hold(c, key, a.ticket(), sent, lease);
            } else if (outcome instanceof AcquireOutcome.TimedOut) {
                outcomesTimedOut.incrementAndGet();
            } else if (outcome instanceof AcquireOutcome.Indeterminate) {
                outcomesIndeterminate.incrementAndGet();
            } else {
                (outcome instanceof AcquireOutcome.Busy ? outcomesBusy : outcomesUnavailable).incrementAndGet();
                Thread.sleep(50 + random.nextInt(150)); // draining, restarting or down: back off
            }
        }

        private void hold(LeaseholdClient c, String key, Ticket ticket, long sent, int lease)
                throws InterruptedException {
            Held h = new Held(key, ticket.token(), sent, System.nanoTime(), ticket.validUntilNanos());
            history.add(h);
            holding = h;
            try {
                if (killedClients.contains(c)) {
                    h.stop(h.deliveredNanos);
                    return;
                }
                if (pauseNextHold) {
                    pauseNextHold = false;
                    // Checks its ticket, then a GC pause past the lease, then acts with the old token.
                    boolean validBeforePause = ticket.isValid();
                    h.stop(System.nanoTime());
                    Thread.sleep((lease + 1) * 1000L); // the pause itself
                    if (validBeforePause) {
                        register.zombieWrite(key, ticket.token());
                    }
                    return;
                }
                int steps = 1 + random.nextInt(3);
                for (int i = 0; i < steps && !stopping; i++) {
                    Thread.sleep(random.nextInt(500)); // work between writes
                    if (random.nextInt(6) == 0 && ticket.extend(lease) instanceof ExtendOutcome.Extended) {
                        extendsDone.incrementAndGet();
                        h.extendedTo(ticket.validUntilNanos());
                    }
                    register.checkedWrite(key, ticket);
                }
                if (random.nextInt(5) != 0) {
                    h.stop(System.nanoTime()); // stops acting as holder when the release starts
                    ticket.release();
                } else {
                    h.stop(ticket.validUntilNanos()); // abandoned: the lease runs out
                }
            } finally {
                holding = null;
            }
        }
    }

    final Set<LeaseholdClient> killedClients = ConcurrentHashMap.newKeySet();

    // ---------------------------------------------------------------- analysis

    private boolean allKeysGrantedAfter(Run run) {
        long from = run.listeningNanos();
        for (String key : KEYS) {
            boolean granted = history.stream().anyMatch(h -> h.key.equals(key) && h.sentNanos - from >= 0);
            if (!granted) {
                return false;
            }
        }
        return true;
    }

    private void analyse() {
        // Validity intervals: no two tickets of a key overlap.
        for (String key : KEYS) {
            List<Held> ofKey = history.stream().filter(h -> h.key.equals(key))
                    .sorted(Comparator.comparingLong(h -> h.deliveredNanos)).toList();
            Held latest = null;
            for (Held h : ofKey) {
                if (latest != null && h.deliveredNanos - latest.endNanos() < 0) {
                    violation(String.format("%s: token %d delivered %.1f ms before token %d stopped being valid",
                            key, h.token, (latest.endNanos() - h.deliveredNanos) / 1e6, latest.token));
                }
                if (latest == null || h.endNanos() - latest.endNanos() > 0) {
                    latest = h;
                }
            }
        }
        // Tokens: never delivered twice; after a restart, above everything delivered before the stop.
        Map<Long, Held> byToken = new ConcurrentHashMap<>();
        for (Held h : history) {
            if (byToken.putIfAbsent(h.token, h) != null) {
                violation("token " + h.token + " delivered twice");
            }
        }
        for (int i = 1; i < runs.size(); i++) {
            Run before = runs.get(i - 1);
            Run after = runs.get(i);
            long maxBefore = history.stream().filter(h -> h.deliveredNanos - before.stoppedNanos() < 0)
                    .mapToLong(h -> h.token).max().orElse(0);
            history.stream().filter(h -> h.sentNanos - after.launchedNanos() >= 0 && h.token <= maxBefore)
                    .forEach(h -> violation("token " + h.token + " after restart " + after.index() + " is not above " + maxBefore));
        }
        // Graces: nothing granted during one; none on the first start; otherwise about a lease, not 255 s.
        for (Run r : runs) {
            long graceEnd = r.launchedNanos() + r.graceMillis() * MS;
            history.stream().filter(h -> h.sentNanos - r.launchedNanos() >= 0 && h.deliveredNanos - graceEnd < 0)
                    .forEach(h -> violation("token " + h.token + " of " + h.key + " granted during the grace of run "
                            + r.index()));
            if (r.index() == 0 && !(r.graceMillis() == 0 && r.reason().equals("first start"))) {
                violation("first start had grace " + r.graceMillis() + " ms (" + r.reason() + ")");
            }
            if (r.index() > 0 && (r.graceMillis() > MAX_GRACE_MS || r.reason().equals("missing horizon")
                    || r.reason().isEmpty())) {
                violation("run " + r.index() + " grace " + r.graceMillis() + " ms (" + r.reason() + "), more than "
                        + MAX_GRACE_MS + " ms");
            }
        }
        // Liveness: after a start followed by enough quiet, every key is granted again in time.
        for (int i = 0; i < runs.size(); i++) {
            Run r = runs.get(i);
            long deadline = r.listeningNanos() + (r.graceMillis() + LIVENESS_MARGIN_MS) * MS;
            long end = r.stoppedNanos() == 0 ? Long.MAX_VALUE : r.stoppedNanos();
            if (end != Long.MAX_VALUE && end - deadline < 0) {
                continue; // stopped before its liveness window closed
            }
            for (String key : KEYS) {
                boolean back = history.stream().anyMatch(h -> h.key.equals(key) && h.sentNanos - r.launchedNanos() >= 0
                        && h.deliveredNanos - deadline <= 0);
                if (!back) {
                    violation("liveness: " + key + " not granted within " + (r.graceMillis() + LIVENESS_MARGIN_MS)
                            + " ms of run " + r.index() + " listening (grace " + r.graceMillis() + " ms)");
                }
            }
        }
    }

    private void report() {
        long total = faults.values().stream().mapToLong(AtomicLong::get).sum();
        System.out.printf("fault injection (seed %d): %d grants, %d extends, %d faults %s%n", seed, history.size(),
                extendsDone.get(), total, faults);
        System.out.printf("  outcomes besides grants: %d timed out, %d busy, %d indeterminate, %d unavailable%n",
                outcomesTimedOut.get(), outcomesBusy.get(), outcomesIndeterminate.get(), outcomesUnavailable.get());
        System.out.printf("  fenced register: %d writes accepted, %d skipped as late by their holder, %d zombie writes"
                + " fenced off, %d zombie writes accepted (no newer token yet)%n", register.accepted.get(),
                register.lateSkipped.get(), register.fencedZombies.get(), register.zombiesAccepted.get());
        for (Run r : runs) {
            long firstGrant = history.stream().filter(h -> h.sentNanos - r.launchedNanos() >= 0)
                    .mapToLong(h -> h.deliveredNanos).min().orElse(-1);
            System.out.printf("  run %d: start %d ms, grace %d ms (%s), first grant %s after listening, ended by %s%n",
                    r.index(), (r.listeningNanos() - r.launchedNanos()) / MS, r.graceMillis(), r.reason(),
                    firstGrant < 0 ? "none" : ((firstGrant - r.listeningNanos()) / MS) + " ms",
                    r.endedBy() == null ? "end of test" : r.endedBy());
        }
        System.out.printf("  violations: %d%n", violations.size());
    }
}
