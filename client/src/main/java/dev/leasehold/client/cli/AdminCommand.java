package dev.leasehold.client.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;

import dev.leasehold.protocol.TokenFloorSnapshot;

/**
 * {@code leasehold admin snapshot save FILE} and {@code leasehold admin snapshot verify FILE}
 * (docs/cluster.md "Backup and restore of the token floor"): save asks the node's Actuator
 * {@code snapshot} endpoint (answered only from loopback, like {@code cluster}; in a cluster only
 * the serving leader takes one), checks the snapshot, and writes it to FILE durably (a temporary
 * file, fsync'd, then moved over FILE), or to stdout for FILE {@code -}; verify reads FILE and checks it. A snapshot is restored by
 * starting a node on an empty data directory with {@code leasehold.restore-from=FILE}.
 */
final class AdminCommand {

    private AdminCommand() {
    }

    static int execute(Context ctx) throws UsageException, InterruptedException {
        String what = ctx.line().value("--what");
        String action = ctx.line().value("--action");
        String file = ctx.line().value("--file");
        if (!"snapshot".equals(what)) {
            throw new UsageException(what == null ? "missing what to do: snapshot save FILE or snapshot verify FILE"
                    : "unknown admin area '" + what + "': snapshot (see leasehold admin --help)");
        }
        if (file == null || file.isBlank()) {
            throw new UsageException("missing FILE: leasehold admin snapshot " + (action == null ? "save" : action)
                    + " FILE");
        }
        Path path = Path.of(file);
        return switch (action == null ? "" : action) {
            case "save" -> save(ctx, path);
            case "verify" -> verify(ctx, path);
            default -> throw new UsageException("unknown snapshot action '" + action + "': save or verify");
        };
    }

    private static int save(Context ctx, Path file) throws UsageException, InterruptedException {
        String http = ctx.line().value("--http");
        String base = http == null ? ClusterCommand.DEFAULT_HTTP
                : http.endsWith("/") ? http.substring(0, http.length() - 1) : http;
        URI uri;
        try {
            uri = URI.create(base + "/actuator/snapshot");
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad --http '" + base + "': " + e.getMessage());
        }
        HttpResponse<String> response;
        try {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            response = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofMillis(ctx.timeoutMillis())).GET()
                    .build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return fail(ctx, ExitCode.UNAVAILABLE, "cannot reach " + base + " (" + why + ")");
        }
        switch (response.statusCode()) {
            case 200 -> {
            }
            case 404 -> {
                return fail(ctx, ExitCode.UNAVAILABLE, base + " has no snapshot endpoint: add snapshot to "
                        + "management.endpoints.web.exposure.include (the Helm chart does)");
            }
            case 403 -> {
                return fail(ctx, ExitCode.REFUSED, "refused: " + response.body().strip());
            }
            default -> {
                return fail(ctx, ExitCode.UNAVAILABLE, "HTTP " + response.statusCode() + " from " + base + ": "
                        + response.body().strip());
            }
        }
        TokenFloorSnapshot s;
        try {
            s = TokenFloorSnapshot.decode(response.body());
        } catch (IllegalArgumentException e) {
            return fail(ctx, ExitCode.UNAVAILABLE, "the answer from " + base + " is no valid snapshot ("
                    + e.getMessage() + "); nothing was written");
        }
        if (file.toString().equals("-")) { // to stdout (kubectl exec ... > FILE): the summary goes to stderr
            ctx.out().print(response.body());
            ctx.out().flush();
            ctx.warn("saved a token floor of " + s.tokenFloor() + " (" + origin(s) + ") to stdout");
            return ExitCode.OK.code();
        }
        try {
            write(file, response.body());
        } catch (IOException e) {
            return fail(ctx, ExitCode.UNAVAILABLE, "cannot write " + file + ": " + e);
        }
        return done(ctx, "saved", file, s);
    }

    private static int verify(Context ctx, Path file) {
        TokenFloorSnapshot s;
        try {
            s = TokenFloorSnapshot.decode(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return fail(ctx, ExitCode.UNAVAILABLE, "cannot read " + file + ": " + e);
        } catch (IllegalArgumentException e) {
            return fail(ctx, ExitCode.REFUSED, file + " does not verify: " + e.getMessage());
        }
        return done(ctx, "verified", file, s);
    }

    /** Durably: the whole text in a temporary file beside FILE, fsync'd, then moved over FILE. */
    private static void write(Path file, String text) throws IOException {
        Path abs = file.toAbsolutePath();
        Path tmp = abs.resolveSibling(abs.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(StandardCharsets.UTF_8.encode(text));
            ch.force(true);
        }
        Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static int done(Context ctx, String what, Path file, TokenFloorSnapshot s) {
        if (ctx.json()) {
            Map<String, Object> m = Context.fields(what);
            m.put("file", file.toString());
            m.put("mode", s.mode());
            m.put("node", s.node());
            m.put("taken_at", s.takenAt().toString());
            m.put("term", s.term());
            m.put("index", s.index());
            m.put("token_floor", s.tokenFloor());
            m.put("roster", String.join(",", s.roster()));
            ctx.out().println(Json.object(m));
        } else {
            ctx.out().printf("%s %s: token floor %d (%s, taken %s)%n", what, file, s.tokenFloor(), origin(s), s.takenAt());
        }
        ctx.out().flush();
        return ExitCode.OK.code();
    }

    private static int fail(Context ctx, ExitCode code, String why) {
        Map<String, Object> m = Context.fields(code == ExitCode.REFUSED ? "refused" : "unavailable");
        m.put("reason", why);
        return ctx.report(code, why, m);
    }

    /** Where a snapshot came from, for the summary line: a single node has no term, index or roster. */
    private static String origin(TokenFloorSnapshot s) {
        if (!"cluster".equals(s.mode())) {
            return "single-node snapshot";
        }
        return "cluster snapshot of " + s.node() + ", term " + s.term() + ", index " + s.index() + ", roster ["
                + String.join(",", s.roster()) + "]";
    }
}
