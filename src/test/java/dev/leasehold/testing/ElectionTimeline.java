package dev.leasehold.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The terms that {@link CandidateMain} processes reported, on the machine's one monotonic clock:
 * for each term, who led it, when it started and when it stopped being valid on its leader's side
 * (the {@code STOP} line's earlier of its time and validity; for a leader killed or still leading,
 * its last reported validity; none for the one that leads now). Promise 1 of docs/election.md is
 * that no two of these intervals overlap.
 */
public final class ElectionTimeline {

    /** One term as its leader saw it; {@code endNanos} is Long.MAX_VALUE while it leads. */
    public record Term(long term, String identity, long startNanos, long endNanos, String stop) {
    }

    private final Map<Long, Term> terms = new TreeMap<>();
    private final List<String> problems = new ArrayList<>();

    /** Reads every candidate's lines. */
    public static ElectionTimeline of(List<CandidateProcess> candidates) {
        ElectionTimeline t = new ElectionTimeline();
        for (CandidateProcess c : candidates) {
            t.read(c.identity(), c.lines(), !c.isAlive());
        }
        return t;
    }

    private void read(String identity, List<String> lines, boolean dead) {
        Map<Long, long[]> seen = new TreeMap<>(); // term -> {start, last validity reported, stopEnd (or -1)}
        Map<Long, String> stops = new TreeMap<>();
        for (String line : lines) {
            String[] w = line.split(" ");
            switch (w[0]) {
                case "START" -> seen.put(Long.parseLong(w[1]), new long[] {Long.parseLong(w[2]), Long.parseLong(w[3]), -1});
                case "VALID" -> {
                    long[] s = seen.get(Long.parseLong(w[1]));
                    if (s != null) {
                        s[1] = Math.max(s[1], Long.parseLong(w[2]));
                    }
                }
                case "STOP" -> {
                    long term = Long.parseLong(w[1]);
                    long[] s = seen.get(term);
                    if (s == null) {
                        problems.add(identity + " stopped term " + term + " it never started");
                    } else {
                        s[2] = Math.min(Long.parseLong(w[2]), Long.parseLong(w[3]));
                        stops.put(term, w[4]);
                    }
                }
                default -> { } // READY, WROTE, CLOSED, and anything the JVM printed
            }
        }
        seen.forEach((term, s) -> {
            long end = s[2] >= 0 ? s[2] : dead ? s[1] : Long.MAX_VALUE;
            Term before = terms.put(term, new Term(term, identity, s[0], end, stops.getOrDefault(term, dead ? "killed" : "leading")));
            if (before != null) {
                problems.add("term " + term + " started by " + before.identity() + " and by " + identity);
            }
        });
    }

    /** Every term, by term. */
    public List<Term> terms() {
        return new ArrayList<>(terms.values());
    }

    /**
     * What breaks the promises: a term started twice, terms that do not start in their order, and
     * two terms valid at once (an earlier term still valid when a later one started).
     */
    public List<String> violations() {
        List<String> v = new ArrayList<>(problems);
        Term previous = null;
        for (Term t : terms.values()) {
            if (previous != null) {
                if (t.startNanos() < previous.startNanos()) {
                    v.add("term " + t.term() + " started before the lower term " + previous.term());
                }
                if (previous.endNanos() > t.startNanos()) {
                    v.add("term " + previous.term() + " (" + previous.identity() + ", " + previous.stop()
                            + ") was valid until " + (previous.endNanos() == Long.MAX_VALUE ? "now"
                                    : (previous.endNanos() - t.startNanos()) / 1000 + " us after")
                            + " term " + t.term() + " (" + t.identity() + ") started");
                }
            }
            previous = t;
        }
        return v;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        long origin = terms.values().stream().mapToLong(Term::startNanos).min().orElse(0);
        for (Term t : terms.values()) {
            b.append(String.format("term %d %s: %+.1f ms .. %s (%s)%n", t.term(), t.identity(),
                    (t.startNanos() - origin) / 1e6,
                    t.endNanos() == Long.MAX_VALUE ? "now" : String.format("%+.1f ms", (t.endNanos() - origin) / 1e6),
                    t.stop()));
        }
        return b.toString();
    }
}
