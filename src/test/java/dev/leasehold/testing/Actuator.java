package dev.leasehold.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;

/** Plain HTTP calls to a running server's Actuator endpoints, as Kubernetes and Prometheus make them. */
public final class Actuator {

    private final String host;
    private final int port;

    public Actuator(int httpPort) {
        this("127.0.0.1", httpPort);
    }

    /** Calls to {@code host} (an address of this machine the management port listens on). */
    public Actuator(String host, int httpPort) {
        this.host = host;
        this.port = httpPort;
    }

    /** A GET of {@code path} (e.g. {@code /actuator/health/readiness}). */
    public Response get(String path) {
        return send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
                .timeout(Duration.ofSeconds(20)).GET().build(), path);
    }

    /** A POST of a JSON body to {@code path}, as the CLI's {@code cluster add} sends it. */
    public Response post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), path);
    }

    private Response send(HttpRequest request, String path) {
        try {
            // A new connection per request, as Kubernetes probes make them (the server closes each
            // one anyway: server.netty.max-keep-alive-requests, see docs/metrics.md).
            // HTTP/1.1 only: no h2c upgrade on plain http.
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new IllegalStateException(request.method() + " " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@code /actuator/prometheus}, parsed. */
    public Scrape scrape() {
        Response r = get("/actuator/prometheus");
        if (r.status() != 200) {
            throw new IllegalStateException("scrape answered " + r.status() + ": " + r.body());
        }
        return Scrape.parse(r.body());
    }

    public record Response(int status, String body) {
        /** A value from the JSON body, e.g. {@code $.components.leasehold.status}. */
        public <T> T json(String path) {
            return JsonPath.read(body, path);
        }
    }

    /**
     * One Prometheus text exposition: samples by their series exactly as written
     * ({@code name{label="value",...}}), plus the {@code # TYPE} and {@code # HELP} lines.
     */
    public record Scrape(String text, Map<String, Double> samples, Map<String, String> types,
            Map<String, String> help) {

        static Scrape parse(String text) {
            Map<String, Double> samples = new LinkedHashMap<>();
            Map<String, String> types = new LinkedHashMap<>();
            Map<String, String> help = new LinkedHashMap<>();
            for (String line : text.split("\n")) {
                if (line.startsWith("# TYPE ")) {
                    String[] p = line.substring(7).split(" ", 2);
                    types.put(p[0], p[1].trim());
                } else if (line.startsWith("# HELP ")) {
                    String[] p = line.substring(7).split(" ", 2);
                    help.put(p[0], p.length > 1 ? p[1].trim() : "");
                } else if (!line.isBlank() && !line.startsWith("#")) {
                    int cut = line.lastIndexOf(' ');
                    samples.put(line.substring(0, cut), Double.parseDouble(line.substring(cut + 1)));
                }
            }
            return new Scrape(text, samples, types, help);
        }

        /**
         * The value of one series; {@code labels} alternate name and value, in the order the
         * exposition writes them (alphabetical). Fails if the series is absent.
         */
        public double value(String name, String... labels) {
            String series = series(name, labels);
            Double v = samples.get(series);
            if (v == null) {
                throw new AssertionError("no series " + series + " in the scrape:\n" + text);
            }
            return v;
        }

        public boolean has(String name, String... labels) {
            return samples.containsKey(series(name, labels));
        }

        private static String series(String name, String... labels) {
            if (labels.length == 0) {
                return name;
            }
            StringBuilder b = new StringBuilder(name).append('{');
            for (int i = 0; i < labels.length; i += 2) {
                if (i > 0) {
                    b.append(',');
                }
                b.append(labels[i]).append("=\"").append(labels[i + 1]).append('"');
            }
            return b.append('}').toString();
        }
    }
}
