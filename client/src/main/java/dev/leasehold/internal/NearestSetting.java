package dev.leasehold.internal;

import java.util.Collection;
import java.util.Locale;

/**
 * The "did you mean" of an unknown setting: the server's {@code leasehold.*} and the starter's
 * {@code leasehold.client.*} failure analyzers both name the valid setting nearest to a key that
 * does not exist. Not API (see the package).
 */
public final class NearestSetting {

    private NearestSetting() {
    }

    /**
     * The name in {@code valid} nearest to {@code unknown} by edit distance, or null when nothing
     * is near: more than a third of the nearest name (at least 2 edits) differs. Names are
     * compared below {@code prefix}, without case, dashes, dots, underscores, brackets or digits,
     * so relaxed forms ({@code leasehold.maxWaiterPerKey}, {@code leasehold.MAX_WAITER_PER_KEY})
     * and list indexes do not count as differences.
     *
     * @param prefix the settings' common prefix, e.g. {@code leasehold}
     * @param unknown the name that does not exist
     * @param valid every name that does, under {@code prefix}
     * @return the first of the nearest valid names, or null
     */
    public static String nearest(String prefix, String unknown, Collection<String> valid) {
        String u = squash(tail(prefix, unknown));
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : valid) {
            int d = distance(u, squash(tail(prefix, candidate)));
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, squash(tail(prefix, best)).length() / 3) ? best : null;
    }

    /** The Levenshtein distance: the fewest insertions, deletions and substitutions from {@code a} to {@code b}. */
    public static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** Below the prefix: the part that tells settings apart (and sets the "a third" of the threshold). */
    private static String tail(String prefix, String name) {
        return name.regionMatches(true, 0, prefix + ".", 0, prefix.length() + 1) ? name.substring(prefix.length() + 1)
                : name;
    }

    private static String squash(String name) {
        return name.toLowerCase(Locale.ROOT).replaceAll("[-._\\[\\]0-9]", "");
    }
}
