package dev.leasehold.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * The server's own hand-off gap histogram ({@code leasehold_handoff_seconds}: Release read →
 * the waiter's {@code A} flushed), read from {@code /actuator/prometheus} at the start and at the
 * end of a measured window. Percentiles come from the bucket deltas of that window, interpolated
 * linearly inside a bucket (the buckets are 5 µs wide below 30 µs, so the error is a few µs).
 */
final class HandoffScrape {

    private static final String BUCKET = "leasehold_handoff_seconds_bucket{";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final URI uri;

    HandoffScrape(String host, int httpPort) {
        this.uri = URI.create("http://" + host + ":" + httpPort + "/actuator/prometheus");
    }

    /** Cumulative count per upper bound in seconds (+Inf as {@link Double#POSITIVE_INFINITY}). */
    Map<Double, Double> buckets() throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).GET().build();
        String body = http.send(req, HttpResponse.BodyHandlers.ofString()).body();
        Map<Double, Double> out = new TreeMap<>();
        for (String line : body.split("\n")) {
            if (!line.startsWith(BUCKET)) {
                continue;
            }
            int le = line.indexOf("le=\"");
            int leEnd = line.indexOf('"', le + 4);
            int close = line.indexOf('}');
            String bound = line.substring(le + 4, leEnd);
            double upper = bound.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bound);
            String value = line.substring(close + 1).trim().split(" ")[0];
            out.put(upper, Double.parseDouble(value));
        }
        return out;
    }

    /** p50 and p99 in µs and the sample count of the window between two scrapes. */
    static double[] percentiles(Map<Double, Double> before, Map<Double, Double> after) {
        TreeMap<Double, Double> delta = new TreeMap<>();
        after.forEach((upper, n) -> delta.put(upper, n - before.getOrDefault(upper, 0.0)));
        double total = delta.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
        return new double[] {at(delta, total, 0.50), at(delta, total, 0.99), total};
    }

    private static double at(TreeMap<Double, Double> cumulative, double total, double q) {
        if (total <= 0) {
            return Double.NaN;
        }
        double target = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            if (e.getValue() >= target) {
                if (e.getKey().isInfinite()) {
                    return lowerBound * 1e6; // beyond the last bucket: report its bound
                }
                double inBucket = e.getValue() - lowerCount;
                double frac = inBucket <= 0 ? 1 : (target - lowerCount) / inBucket;
                return (lowerBound + frac * (e.getKey() - lowerBound)) * 1e6;
            }
            lowerBound = e.getKey();
            lowerCount = e.getValue();
        }
        return Double.NaN;
    }
}
