package dev.leasehold.client.cli;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * {@code inspect} and {@code top}: the server's Actuator {@code locks} endpoint (on its
 * management port, plain HTTP by default), printed for people or, with {@code --json}, passed
 * through as the endpoint wrote it. The endpoint must be exposed (docs/operations.md).
 */
final class Inspect {

    /** The management port of a server started with the shipped application.yml. */
    static final int DEFAULT_HTTP_PORT = 7421;

    private Inspect() {
    }

    static int key(Context ctx) throws UsageException {
        String key = ctx.key();
        StringBuilder path = new StringBuilder("/actuator/locks");
        for (String segment : key.split("/", -1)) {
            // One path segment per '/' of the key (the endpoint joins them again), each escaped.
            path.append('/').append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
        }
        return call(ctx, path.toString(), body -> {
            StringBuilder b = new StringBuilder();
            describe(b, body);
            return b.toString().stripTrailing();
        });
    }

    static int top(Context ctx) throws UsageException {
        String n = ctx.line().value("--n");
        int count;
        try {
            count = n == null ? 10 : Integer.parseInt(n);
        } catch (NumberFormatException e) {
            count = -1;
        }
        if (count < 1 || count > 100) {
            throw new UsageException("--n must be a whole number from 1 to 100, not '" + n + "'");
        }
        return call(ctx, "/actuator/locks?top=" + count, body -> {
            StringBuilder b = new StringBuilder();
            b.append("scanned ").append(body.get("scannedKeys")).append(" keys in ").append(body.get("tookMs"))
                    .append(" ms\n");
            section(b, "longest queues", body.get("longestQueues"));
            section(b, "held longest", body.get("heldLongest"));
            return b.toString().stripTrailing();
        });
    }

    @FunctionalInterface
    private interface Render {
        String text(Map<String, Object> body);
    }

    private static int call(Context ctx, String path, Render render) throws UsageException {
        String base = base(ctx);
        URI uri;
        try {
            uri = URI.create(base + path);
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad --http '" + base + "': " + e.getMessage());
        }
        Duration timeout = Duration.ofMillis(ctx.timeoutMillis());
        HttpResponse<String> response;
        try {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout)
                    .build();
            response = http.send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // ConnectException has no message: name the failure, and where the URL came from
            String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return unavailable(ctx, base, "cannot reach " + base + " (" + why + (ctx.line().value("--http") == null
                    ? "; the management port of the first --server's host by default: set --http URL" : "") + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return unavailable(ctx, base, "interrupted");
        }
        if (response.statusCode() == 404) {
            return unavailable(ctx, base, base + " does not expose the locks endpoint: add locks to"
                    + " management.endpoints.web.exposure.include (docs/operations.md)");
        }
        Map<String, Object> body;
        try {
            body = JsonReader.object(response.body());
        } catch (IllegalArgumentException e) {
            return unavailable(ctx, base, "HTTP " + response.statusCode() + " from " + base + ", not the locks endpoint's"
                    + " answer: " + e.getMessage());
        }
        if (response.statusCode() != 200) {
            Object error = body.get("error");
            return unavailable(ctx, base, "HTTP " + response.statusCode() + " from " + base
                    + (error != null ? ": " + error : ""));
        }
        if (Boolean.FALSE.equals(body.get("serving"))) {
            Object leader = body.get("leader");
            String where = leader == null || leader.toString().isEmpty() ? "no leader is known now"
                    : "the leader is " + leader + " (protocol address; ask its management port)";
            if (ctx.json()) {
                ctx.out().println(response.body());
                ctx.out().flush();
                return ExitCode.UNAVAILABLE.code();
            }
            return unavailable(ctx, base, base + " is not the serving leader: " + where);
        }
        if (ctx.json()) {
            ctx.out().println(response.body());
            ctx.out().flush();
            return ExitCode.OK.code();
        }
        ctx.out().println(render.text(body));
        ctx.out().flush();
        return ExitCode.OK.code();
    }

    /** {@code --http}, else http://HOST:7421 with the first {@code --server}'s host. */
    static String base(Context ctx) {
        String http = ctx.line().value("--http");
        if (http != null) {
            return http.endsWith("/") ? http.substring(0, http.length() - 1) : http;
        }
        String first = ctx.servers().split(",")[0].trim();
        String host;
        if (first.startsWith("[")) {
            host = first.substring(0, first.indexOf(']') + 1);
        } else {
            int colon = first.lastIndexOf(':');
            host = colon > 0 ? first.substring(0, colon) : first;
        }
        return "http://" + host + ":" + DEFAULT_HTTP_PORT;
    }

    private static int unavailable(Context ctx, String base, String why) {
        Map<String, Object> m = Context.fields("unavailable");
        m.put("http", base);
        m.put("reason", why);
        return ctx.report(ExitCode.UNAVAILABLE, "unavailable: " + why, m);
    }

    private static void section(StringBuilder b, String title, Object views) {
        List<?> list = views instanceof List<?> l ? l : List.of();
        b.append('\n').append(title).append(list.isEmpty() ? ": none\n" : ":\n");
        for (Object v : list) {
            if (v instanceof Map<?, ?> m) {
                @SuppressWarnings("unchecked")
                Map<String, Object> view = (Map<String, Object>) m;
                describe(b, view);
            }
        }
    }

    /**
     * One key for people, e.g.
     * <pre>
     * "orders/42" queued
     *   token 1000, granted 12.3s ago, lease 17.7s left (longest requested 30s)
     *   value "n1"
     *   holder 10.0.0.7:51234 (CN=orders)
     *   2 waiters; oldest waits left: 19.8s, 5s
     * </pre>
     */
    static void describe(StringBuilder b, Map<String, Object> v) {
        b.append(Context.quote(String.valueOf(v.get("key")))).append(' ').append(v.get("state")).append('\n');
        if (v.get("token") != null) {
            b.append("  token ").append(v.get("token")).append(", granted ").append(ms(v.get("grantedAgoMs")))
                    .append(" ago, lease ").append(ms(v.get("leaseRemainingMs"))).append(" left (longest requested ")
                    .append(v.get("longestLeaseSeconds")).append("s)\n");
            if (v.get("value") != null) {
                // PROTOCOL.md 17.2: text escaped as keys are, or hex when it is not UTF-8
                b.append("  value ").append("hex".equals(v.get("valueEncoding")) ? "0x" + v.get("value") + " (hex)"
                        : Context.quote(String.valueOf(v.get("value")))).append('\n');
            }
            if (v.get("holder") instanceof Map<?, ?> h) {
                b.append("  holder ").append(h.get("address"));
                if (h.get("identity") != null) {
                    b.append(" (").append(h.get("identity")).append(')');
                }
                b.append('\n');
            }
        }
        if (v.get("limit") != null) {
            Object limit = v.get("limit");
            b.append("  shared, ").append(Long.valueOf(0).equals(limit) ? "read lock" : "limit " + limit);
            List<?> holders = v.get("sharedHolders") instanceof List<?> l ? l : List.of();
            b.append(", ").append(holders.size()).append(holders.size() == 1 ? " holder" : " holders");
            if (v.get("delayedSharedSlots") != null) {
                b.append(", ").append(v.get("delayedSharedSlots")).append(" slot(s) in lock-delay");
            }
            b.append('\n');
            for (Object o : holders) {
                if (o instanceof Map<?, ?> g) {
                    b.append("    token ").append(g.get("token")).append(", granted ").append(ms(g.get("grantedAgoMs")))
                            .append(" ago, lease ").append(ms(g.get("leaseRemainingMs"))).append(" left");
                    if (g.get("holder") instanceof Map<?, ?> h) {
                        b.append(", holder ").append(h.get("address"));
                        if (h.get("identity") != null) {
                            b.append(" (").append(h.get("identity")).append(')');
                        }
                    }
                    b.append('\n');
                }
            }
        }
        if (v.get("delayedToken") != null) {
            b.append("  lock-delay after the expiry of token ").append(v.get("delayedToken")).append(": ")
                    .append(ms(v.get("delayRemainingMs"))).append(" left\n");
        }
        if (v.get("waiters") instanceof Map<?, ?> w) {
            Object count = w.get("count");
            b.append("  ").append(count).append(Long.valueOf(1).equals(count) ? " waiter" : " waiters");
            if (w.get("oldestRemainingMs") instanceof List<?> waits && !waits.isEmpty()) {
                b.append("; oldest waits left: ");
                List<?> kinds = w.get("oldestKinds") instanceof List<?> k ? k : List.of();
                for (int i = 0; i < waits.size(); i++) {
                    b.append(i > 0 ? ", " : "").append(ms(waits.get(i)));
                    if (i < kinds.size() && "shared".equals(kinds.get(i))) {
                        b.append(" (shared)");
                    }
                }
            }
            b.append('\n');
        }
    }

    private static String ms(Object millis) {
        return millis instanceof Number n ? Durations.format(n.longValue()) : String.valueOf(millis);
    }
}
