package dev.leasehold.client.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code leasehold cluster members|add|remove|replace}: the server's Actuator {@code cluster}
 * endpoint, which answers only from the node itself (loopback), so it is run inside a member's
 * pod or host: {@code kubectl exec leasehold-0 -- bin/leasehold cluster members}
 * (docs/cluster.md "Changing members", docs/security.md).
 */
final class ClusterCommand {

    /** The node's own management port with the shipped application.yml. */
    static final String DEFAULT_HTTP = "http://127.0.0.1:" + Inspect.DEFAULT_HTTP_PORT;
    /** A change waits for catch-up and commits: longer than a lock request's default timeout. */
    static final long DEFAULT_CHANGE_TIMEOUT_MS = 120_000;

    private ClusterCommand() {
    }

    static int execute(Context ctx) throws UsageException, InterruptedException {
        String action = ctx.line().value("--action");
        if (action == null) {
            throw new UsageException("missing what to do: members, add, remove or replace (see leasehold cluster --help)");
        }
        String id = ctx.line().value("--id");
        String newId = ctx.line().value("--new-id");
        String raft = ctx.line().value("--raft-address");
        String client = ctx.line().value("--client-address");
        String identity = ctx.line().value("--identity");
        Map<String, Object> body = new LinkedHashMap<>();
        switch (action) {
            case "members" -> {
                refuse(id != null || newId != null || raft != null || client != null || identity != null,
                        "members takes no arguments");
                return call(ctx, "GET", "", null);
            }
            case "add" -> {
                need(id, "add needs the new node's id: leasehold cluster add ID --raft-address H:P --client-address H:P");
                need(raft, "add needs --raft-address HOST:PORT (the new node's Raft port)");
                need(client, "add needs --client-address HOST:PORT (the new node's lock protocol port)");
                refuse(newId != null, "add takes one id");
                body.put("id", id);
                body.put("raftAddress", raft);
                body.put("clientAddress", client);
            }
            case "remove" -> {
                need(id, "remove needs the id of the member to remove: leasehold cluster remove ID");
                refuse(newId != null || raft != null || client != null || identity != null,
                        "remove takes only the member's id");
                body.put("id", id);
            }
            case "replace" -> {
                need(id, "replace needs the old and the new id: leasehold cluster replace OLD NEW --raft-address H:P "
                        + "--client-address H:P");
                need(newId, "replace needs the new node's id after the old one");
                need(raft, "replace needs --raft-address HOST:PORT (the new node's Raft port)");
                need(client, "replace needs --client-address HOST:PORT (the new node's lock protocol port)");
                body.put("id", id);
                body.put("newId", newId);
                body.put("raftAddress", raft);
                body.put("clientAddress", client);
            }
            default -> throw new UsageException("unknown cluster action '" + action
                    + "': members, add, remove or replace (see leasehold cluster --help)");
        }
        if (identity != null) {
            body.put("identity", identity);
        }
        return call(ctx, "POST", "/" + action, body);
    }

    private static void need(String value, String message) throws UsageException {
        if (value == null || value.isBlank()) {
            throw new UsageException(message);
        }
    }

    private static void refuse(boolean bad, String message) throws UsageException {
        if (bad) {
            throw new UsageException(message);
        }
    }

    private static int call(Context ctx, String method, String path, Map<String, Object> body)
            throws UsageException, InterruptedException {
        String http = ctx.line().value("--http");
        String base = http == null ? DEFAULT_HTTP : http.endsWith("/") ? http.substring(0, http.length() - 1) : http;
        URI uri;
        try {
            uri = URI.create(base + "/actuator/cluster" + path);
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad --http '" + base + "': " + e.getMessage());
        }
        Duration timeout = Duration.ofMillis(ctx.line().value("--timeout") == null ? DEFAULT_CHANGE_TIMEOUT_MS
                : ctx.timeoutMillis());
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout);
        if (body == null) {
            request.GET();
        } else {
            request.header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(Json.object(body), StandardCharsets.UTF_8));
        }
        HttpResponse<String> response;
        try {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (java.net.http.HttpTimeoutException e) {
            return report(ctx, ExitCode.INDETERMINATE, base, "no answer within " + Durations.format(timeout.toMillis())
                    + (body == null ? "" : "; the change may have been made: run leasehold cluster members"));
        } catch (IOException e) {
            String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return report(ctx, ExitCode.UNAVAILABLE, base, "cannot reach " + base + " (" + why + (http == null
                    ? "; run this on a member, where the management port is " + DEFAULT_HTTP + ", or set --http URL"
                    : "") + ")");
        }
        if (response.statusCode() == 404) {
            return report(ctx, ExitCode.UNAVAILABLE, base, base + " has no cluster endpoint: it is a single node "
                    + "(no leasehold.cluster.node-id), or cluster is not in management.endpoints.web.exposure.include "
                    + "(the Helm chart adds it in cluster mode)");
        }
        Map<String, Object> answer;
        try {
            answer = JsonReader.object(response.body());
        } catch (IllegalArgumentException e) {
            return report(ctx, ExitCode.UNAVAILABLE, base, "HTTP " + response.statusCode() + " from " + base
                    + ", not the cluster endpoint's answer: " + e.getMessage());
        }
        if (response.statusCode() != 200) {
            String error = String.valueOf(answer.get("error"));
            ExitCode code = switch (response.statusCode()) {
                case 400, 403, 409 -> ExitCode.REFUSED;
                case 504 -> ExitCode.INDETERMINATE;
                default -> ExitCode.UNAVAILABLE;
            };
            return report(ctx, code, base, (code == ExitCode.REFUSED ? "refused: " : "") + error);
        }
        if (ctx.json()) {
            ctx.out().println(response.body());
            ctx.out().flush();
            return ExitCode.OK.code();
        }
        ctx.out().println(describe(answer));
        ctx.out().flush();
        return ExitCode.OK.code();
    }

    private static int report(Context ctx, ExitCode code, String base, String why) {
        Map<String, Object> m = Context.fields(code == ExitCode.REFUSED ? "refused"
                : code == ExitCode.INDETERMINATE ? "indeterminate" : "unavailable");
        m.put("http", base);
        m.put("reason", why);
        return ctx.report(code, (code == ExitCode.REFUSED ? "" : code.name().toLowerCase(java.util.Locale.ROOT) + ": ")
                + why, m);
    }

    /**
     * For people, e.g.
     * <pre>
     * add n4: done in 1840 ms
     *   probed n4 at 10.0.0.4:7430 (its storage is formatted) (212 ms)
     *   ...
     * leader n1, term 3, commit index 5012
     *   n1  LEADER    10.0.0.1:7430  client 10.0.0.1:7420  commit 5012
     *   n4  VOTER     10.0.0.4:7430  client 10.0.0.4:7420  commit 5012  contact 12 ms ago
     * </pre>
     */
    static String describe(Map<String, Object> a) {
        StringBuilder b = new StringBuilder();
        if (a.get("change") != null) {
            b.append(a.get("change")).append(": done in ").append(a.get("tookMs")).append(" ms\n");
            if (a.get("steps") instanceof List<?> steps) {
                for (Object s : steps) {
                    b.append("  ").append(s).append('\n');
                }
            }
        }
        b.append("leader ").append(a.get("leader")).append(", term ").append(a.get("term")).append(", commit index ")
                .append(a.get("commitIndex")).append('\n');
        if (a.get("members") instanceof List<?> members) {
            for (Object o : members) {
                if (o instanceof Map<?, ?> m) {
                    b.append(String.format(java.util.Locale.ROOT, "  %-10s %-9s %s  client %s  commit %s", m.get("id"),
                            m.get("role"), m.get("raftAddress"), m.get("clientAddress"), m.get("commitIndex")));
                    if (m.get("matchIndex") instanceof Number n && n.longValue() >= 0) {
                        b.append("  match ").append(n);
                    }
                    Object contact = m.get("lastContactMs");
                    if (contact instanceof Number n && n.longValue() > 0) {
                        b.append("  contact ").append(n).append(" ms ago");
                    }
                    b.append('\n');
                }
            }
        }
        return b.toString().stripTrailing();
    }
}
