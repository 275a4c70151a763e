package dev.leasehold.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * What {@link Bench} measured, as the table it prints: a value per measure and target, kept in the
 * order measured, and the ratio columns (every target against Redis + Jedis, the official client
 * against Redisson's fair lock, the cluster against etcd). Measures whose name starts with
 * {@code #} are kept for later computations and not printed. Also the number formats every
 * workload's output uses.
 */
final class ResultTable {

    private final Map<String, Map<String, Object>> results = new LinkedHashMap<>();

    /** Records {@code value} of {@code measure} for {@code target}. */
    void put(String target, String measure, Object value) {
        results.computeIfAbsent(measure, k -> new LinkedHashMap<>()).put(target, value);
    }

    /** The value of {@code measure} for {@code target}, or null. */
    Object get(String measure, String target) {
        return results.getOrDefault(measure, Map.of()).get(target);
    }

    static double us(Histogram h, double pct) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(pct) / 1000.0;
    }

    /** The Markdown table: a row per measure, a column per target, then the ratio columns. */
    String table(List<String> names, String loadBefore, String loadAfter) {
        // Ratio columns: every target against Redis + Jedis, and the official client against
        // Redisson's fair lock (the only fair Redis lock) when both ran.
        List<String[]> ratios = new ArrayList<>();
        if (names.contains("redis")) {
            for (String n : names) {
                if (!n.equals("redis")) {
                    ratios.add(new String[] {n, "redis"});
                }
            }
        }
        if (names.contains("client") && names.contains("redisson-fair")) {
            ratios.add(new String[] {"client", "redisson-fair"});
        }
        // The cluster against etcd, each through its own Java client (and the raw generator too).
        if (names.contains("etcd")) {
            for (String n : List.of("cluster-client", "cluster")) {
                if (names.contains(n)) {
                    ratios.add(new String[] {n, "etcd"});
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("| measure | ");
        for (String n : names) {
            sb.append(BenchTargets.display(n)).append(" | ");
        }
        for (String[] r : ratios) {
            sb.append(BenchTargets.display(r[0])).append(" ÷ ").append(BenchTargets.display(r[1])).append(" | ");
        }
        sb.append('\n').append("|---|");
        for (int i = 0; i < names.size() + ratios.size(); i++) {
            sb.append("---:|");
        }
        sb.append('\n');
        for (Map.Entry<String, Map<String, Object>> e : results.entrySet()) {
            if (e.getKey().startsWith("#")) {
                continue;
            }
            sb.append("| ").append(e.getKey()).append(" | ");
            for (String n : names) {
                sb.append(fmt(e.getValue().get(n))).append(" | ");
            }
            String k = e.getKey();
            boolean noRatio = k.contains("change") || k.contains("share") || k.contains("Jain");
            for (String[] r : ratios) {
                Object a = e.getValue().get(r[0]);
                Object b = e.getValue().get(r[1]);
                sb.append(noRatio || a == null || b == null ? ""
                        : a instanceof Double x && b instanceof Double y ? f2(x / y) + "×" : ratioOfPairs(a, b)).append(" | ");
            }
            sb.append('\n');
        }
        sb.append("\nload average (1/5/15 min) before: ").append(loadBefore).append(", after: ").append(loadAfter)
                .append('\n');
        return sb.toString();
    }

    /** "a / b" strings: the ratio of the first numbers (p50s). */
    static String ratioOfPairs(Object a, Object b) {
        try {
            double x = Double.parseDouble(String.valueOf(a).split(" ")[0]);
            double y = Double.parseDouble(String.valueOf(b).split(" ")[0]);
            return f2(x / y) + "× (first)";
        } catch (RuntimeException e) {
            return "";
        }
    }

    static String fmt(Object v) {
        if (v == null) {
            return "–";
        }
        if (v instanceof Double d) {
            if (Double.isNaN(d)) {
                return "–";
            }
            return Math.abs(d) >= 100 ? String.format(Locale.ROOT, "%,.0f", d) : f2(d);
        }
        return v.toString();
    }

    static String pct(double d) {
        return String.format(Locale.ROOT, "%.0f %%", d * 100);
    }

    static String f1(double d) {
        return String.format(Locale.ROOT, "%.1f", d);
    }

    static String f2(double d) {
        return String.format(Locale.ROOT, "%.2f", d);
    }
}
