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

    /**
     * One valid ticket: validity as the client computes it (9.6), ended early by its Release.
     * {@code limit}: {@link #EXCLUSIVE} for an {@code A}, else the shared acquire's limit
     * (PROTOCOL.md section 13; 0 = a read lock).
     */
    record Ticket(String key, long token, int node, long seenNanos, long validEndNanos, int limit) {

        /** An exclusive ticket. */
        Ticket(String key, long token, int node, long seenNanos, long validEndNanos) {
            this(key, token, node, seenNanos, validEndNanos, EXCLUSIVE);
        }

        boolean shared() {
            return limit != EXCLUSIVE;
        }

        /** Both valid at some instant. */
        boolean overlaps(Ticket o) {
            return seenNanos < o.validEndNanos && o.seenNanos < validEndNanos;
        }
    }

    /** {@link Ticket#limit} of an exclusive ticket. */
    static final int EXCLUSIVE = -1;

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

    /** The valid tickets recorded, shared ({@code S}) or exclusive ({@code A}). */
    List<Ticket> tickets(boolean shared) {
        return tickets.stream().filter(t -> t.shared() == shared).toList();
    }

    /**
     * The rules of a key with shared tickets (PROTOCOL.md 13.4, 13.7), {@code list} in the order
     * they were seen: never an exclusive ticket valid together with any other; never more shared
     * tickets valid at once than the limit (a read lock's limit 0 is the server's maximum, not
     * checked here); one limit per key; and tokens grow across every exclusive ticket: a ticket
     * seen after an exclusive one stopped being valid has a larger token, and so has an exclusive
     * ticket seen after any other stopped. (Two shared tickets may be seen out of token order:
     * the later-issued one's answer can arrive first.)
     */
    private static void checkShared(List<Ticket> list, List<String> out) {
        for (int i = 0; i < list.size(); i++) {
            Ticket a = list.get(i);
            for (int j = i + 1; j < list.size(); j++) {
                Ticket b = list.get(j);
                if (a.shared() && b.shared()) {
                    if (a.limit() != b.limit()) {
                        out.add("key " + a.key() + " granted shared with limits " + a.limit() + " and " + b.limit());
                    }
                    continue;
                }
                if (a.overlaps(b)) {
                    out.add((a.shared() ? "shared " : "exclusive ") + a + " and " + (b.shared() ? "shared " : "exclusive ")
                            + b + " valid at once (" + TimeUnit.NANOSECONDS.toMillis(a.validEndNanos() - b.seenNanos())
                            + " ms overlap)");
                } else if (a.validEndNanos() <= b.seenNanos() && b.token() <= a.token()) {
                    out.add("tokens of key " + a.key() + " went from " + a.token() + " to " + b.token() + " across "
                            + (a.shared() ? "an exclusive ticket" : "the exclusive ticket " + a));
                }
            }
        }
        // Shared tickets valid at once: a sweep over their starts and ends (an end before a start at the same instant).
        List<long[]> events = new ArrayList<>();
        for (Ticket t : list) {
            if (t.shared() && t.limit() > 0) {
                events.add(new long[] {t.seenNanos(), 1, t.limit()});
                events.add(new long[] {t.validEndNanos(), -1, t.limit()});
            }
        }
        events.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        int valid = 0;
        int worst = 0;
        for (long[] e : events) {
            valid += (int) e[1];
            if (valid > e[2] && valid > worst) {
                worst = valid;
                out.add(valid + " shared tickets of key " + list.get(0).key() + " valid at once, limit " + e[2]);
            }
        }
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
            if (list.stream().anyMatch(Ticket::shared)) {
                checkShared(list, out);
                continue;
            }
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
