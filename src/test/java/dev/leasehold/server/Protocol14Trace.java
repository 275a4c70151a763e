package dev.leasehold.server;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The last steps of a {@link Protocol14ModelIntegrationTests} run, shown with any failed check
 * so that a seed's failure can be read without a rerun, and counts of what the run did.
 */
final class Protocol14Trace {

    private static final int KEPT = 40;

    private final Deque<String> steps = new ArrayDeque<>();
    private final Map<String, Integer> counts = new LinkedHashMap<>();

    void note(String format, Object... args) {
        steps.addLast(String.format(format, args));
        if (steps.size() > KEPT) {
            steps.removeFirst();
        }
    }

    void count(String what) {
        counts.merge(what, 1, Integer::sum);
    }

    Map<String, Integer> counts() {
        return counts;
    }

    /** Fails with {@code message} and the last steps unless {@code ok}. */
    void check(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(message + "\nlast steps:\n  " + String.join("\n  ", steps));
        }
    }
}
