package dev.leasehold.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import dev.leasehold.testing.support.Wait;

/**
 * Everything the test clients saw, and the checks that need only that (PROTOCOL.md 6, 9.6, 10).
 * Times are the test JVM's {@code System.nanoTime()}. Thread-safe: the load threads record.
 *
 * <p>What a client can check, and what it cannot: a grant's commit happens on the server before
 * the {@code A} is written, so "no grant without a majority" is checkable only against the
 * faults the test itself injected: an {@code A} from a node that the schedule had cut from both
 * peers, read more than {@link #IN_FLIGHT_NANOS} after the cut began (an answer already on its way
 * when the cut began is fine), is a grant made without a majority. While links flap the node may
 * have had a majority between two cuts, so only cuts that stayed in place count.
 */
final class ClusterHistory {

    /** How long an answer written just before a cut may take to reach the client. */
    static final long IN_FLIGHT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /** One valid ticket: validity as the client computes it (9.6), ended early by its Release. */
    record Ticket(String key, long token, int node, long seenNanos, long validEndNanos) {
    }

    /** A node cut from both peers (not from the clients, unless said) during [from, to). */
    record Isolation(int node, long fromNanos, long toNanos, String fault) {
    }

    private final ConcurrentLinkedQueue<Ticket> tickets = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<long[]> grantsSeen = new ConcurrentLinkedQueue<>(); // node, seen, token
    private final ConcurrentLinkedQueue<long[]> x9 = new ConcurrentLinkedQueue<>(); // node, seen
    private final ConcurrentLinkedQueue<Isolation> isolations = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    private final Map<String, Long> outcomeCounts = Collections.synchronizedMap(new HashMap<>());
    private final java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong outcomes = new java.util.concurrent.atomic.AtomicLong();

    void sent() {
        sent.incrementAndGet();
    }

    void outcome(String what) {
        outcomes.incrementAndGet();
        outcomeCounts.merge(what, 1L, Long::sum);
    }

    /** Every correlated {@code A} (valid for the caller or not): for the majority rule. */
    void granted(int node, long seenNanos, long token) {
        grantsSeen.add(new long[] {node, seenNanos, token});
    }

    void ticket(Ticket t) {
        tickets.add(t);
    }

    void x9(int node, long seenNanos) {
        x9.add(new long[] {node, seenNanos});
    }

    /** A session that a node answered as leader got {@code X 8} from it (PROTOCOL.md 10). */
    void violation(String what) {
        violations.add(what);
    }

    void isolated(Isolation i) {
        isolations.add(i);
    }

    int tickets() {
        return tickets.size();
    }

    /**
     * Waits until {@code n} more grants than now are recorded, at most {@code timeoutMs}: traffic
     * on the cluster as it is now, instead of a guess of how long that takes. False on timeout
     * (liveness is judged by the caller, or by the rules afterwards).
     */
    boolean awaitMoreGrants(int n, long timeoutMs) throws InterruptedException {
        int target = tickets() + n;
        try {
            // Polling a record the load threads fill.
            Wait.until(n + " more grants (" + target + " in all)", Duration.ofMillis(timeoutMs), this::tickets,
                    t -> t >= target);
            return true;
        } catch (AssertionError e) {
            System.out.println("ClusterHistory: " + e.getMessage() + " grants; outcomes " + outcomeCounts());
            return false;
        }
    }

    long maxToken() {
        long max = 0;
        for (Ticket t : tickets) {
            max = Math.max(max, t.token());
        }
        for (long[] g : grantsSeen) {
            max = Math.max(max, g[2]);
        }
        return max;
    }

    Map<String, Long> outcomeCounts() {
        synchronized (outcomeCounts) {
            return new HashMap<>(outcomeCounts);
        }
    }

    long sentCount() {
        return sent.get();
    }

    /** The first {@code X 9} from {@code node} at or after {@code fromNanos}, or -1. */
    long firstX9(int node, long fromNanos) {
        long first = -1;
        for (long[] e : x9) {
            if (e[0] == node && e[1] >= fromNanos && (first < 0 || e[1] < first)) {
                first = e[1];
            }
        }
        return first;
    }

    /** Every rule; returns the violations (empty when the history is fine). */
    List<String> check() {
        List<String> out = new ArrayList<>(violations);
        if (outcomes.get() != sent.get()) {
            out.add("Acquires sent " + sent.get() + " but outcomes " + outcomes.get() + " (exactly one each)");
        }
        Map<Long, long[]> byToken = new HashMap<>();
        for (long[] g : grantsSeen) {
            long[] prev = byToken.put(g[2], g);
            if (prev != null) {
                out.add("token " + g[2] + " granted twice (nodes n" + (prev[0] + 1) + " and n" + (g[0] + 1) + ")");
            }
        }
        Map<String, List<Ticket>> byKey = new HashMap<>();
        for (Ticket t : tickets) {
            byKey.computeIfAbsent(t.key(), k -> new ArrayList<>()).add(t);
        }
        for (List<Ticket> list : byKey.values()) {
            list.sort((a, b) -> Long.compare(a.seenNanos(), b.seenNanos()));
            for (int i = 1; i < list.size(); i++) {
                Ticket prev = list.get(i - 1);
                Ticket next = list.get(i);
                if (next.token() <= prev.token()) {
                    out.add("tokens of key " + next.key() + " went from " + prev.token() + " to " + next.token());
                }
                if (next.seenNanos() < prev.validEndNanos()) {
                    out.add("ticket " + next + " valid before " + prev + " stopped being valid ("
                            + TimeUnit.NANOSECONDS.toMillis(prev.validEndNanos() - next.seenNanos()) + " ms overlap)");
                }
            }
        }
        for (Isolation iso : isolations) {
            for (long[] g : grantsSeen) {
                if (g[0] == iso.node() && g[1] >= iso.fromNanos() + IN_FLIGHT_NANOS && g[1] < iso.toNanos()) {
                    out.add("n" + (iso.node() + 1) + " granted token " + g[2] + " "
                            + TimeUnit.NANOSECONDS.toMillis(g[1] - iso.fromNanos()) + " ms into " + iso.fault()
                            + " (cut from both peers: no majority)");
                }
            }
        }
        return out;
    }
}
