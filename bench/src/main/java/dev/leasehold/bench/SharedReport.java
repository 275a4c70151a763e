package dev.leasehold.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.HdrHistogram.Histogram;

/** What {@link SharedBench} measured, as its tables, and the figures and formats its lines use. */
final class SharedReport {

    private final Map<String, Map<String, String>> rows = new LinkedHashMap<>();

    /** Records {@code value} of {@code measure} in {@code table} for {@code target}. */
    void put(String table, String measure, String target, String value) {
        rows.computeIfAbsent(table + "\u0000" + measure, k -> new LinkedHashMap<>()).put(target, value);
    }

    /** One table (W5a or W5b) as Markdown: a row per measure, a column per target. */
    String table(String table, List<String> targets) {
        StringBuilder sb = new StringBuilder("| " + table + " | ");
        targets.forEach(t -> sb.append(SharedBench.display(t)).append(" | "));
        sb.append("\n|---|");
        targets.forEach(t -> sb.append("---:|"));
        sb.append('\n');
        rows.forEach((k, v) -> {
            if (k.startsWith(table + "\u0000")) {
                sb.append("| ").append(k.substring(table.length() + 1)).append(" | ");
                targets.forEach(t -> sb.append(v.getOrDefault(t, "–")).append(" | "));
                sb.append('\n');
            }
        });
        return sb.toString();
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
    }

    static String minMax(List<SharedBench.Stats> stats) {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (SharedBench.Stats s : stats) {
            min = Math.min(min, s.grants);
            max = Math.max(max, s.grants);
        }
        return min + ".." + max;
    }

    static double jain(List<SharedBench.Stats> stats) {
        double sum = 0;
        double squares = 0;
        for (SharedBench.Stats s : stats) {
            sum += s.grants;
            squares += (double) s.grants * s.grants;
        }
        return squares == 0 ? Double.NaN : sum * sum / (stats.size() * squares);
    }

    static String f0(double d) {
        return String.format(Locale.ROOT, "%,.0f", d);
    }

    static String f1(double d) {
        return String.format(Locale.ROOT, "%,.1f", d);
    }

    static String f2(double d) {
        return String.format(Locale.ROOT, "%.2f", d);
    }
}
