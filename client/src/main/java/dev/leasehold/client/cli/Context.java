package dev.leasehold.client.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.ClientTls;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.protocol.Keys;
import dev.leasehold.protocol.Wire;

/**
 * What every command needs: the parsed global options (server, timeout, output style), the
 * output streams, and the shared reporting of outcomes, so that each result is one line: on
 * stdout when it is what was asked for, on stderr with {@code leasehold:} when it is a failure,
 * and with {@code --json} always one JSON object on stdout.
 */
final class Context {

    static final String DEFAULT_SERVER = "127.0.0.1:" + Wire.DEFAULT_PORT;
    static final long DEFAULT_TIMEOUT_MS = 5_000;

    private final CommandLine line;
    private final PrintStream out;
    private final PrintStream err;
    private final String servers;
    private final long timeoutMillis;
    private final ClientTls tls;

    Context(CommandLine line, PrintStream out, PrintStream err, Map<String, String> env) throws UsageException {
        this.line = line;
        this.out = out;
        this.err = err;
        String server = line.value("--server");
        if (server == null) {
            String fromEnv = env.get("LEASEHOLD_SERVER");
            server = fromEnv == null || fromEnv.isBlank() ? DEFAULT_SERVER : fromEnv.trim();
        }
        this.servers = server;
        String timeout = line.value("--timeout");
        this.timeoutMillis = timeout == null ? DEFAULT_TIMEOUT_MS : Durations.millis("--timeout", timeout);
        if (timeoutMillis <= 0 || timeoutMillis > Wire.MAX_SECONDS * 1000L) {
            throw new UsageException("--timeout must be more than 0 and at most " + Wire.MAX_SECONDS + "s, not '"
                    + timeout + "'");
        }
        this.tls = tls(line, env);
    }

    /** {@code --tls}, {@code --cacert}, {@code --cert} + {@code --cert-key} (or their variables): TLS, else null. */
    private static ClientTls tls(CommandLine line, Map<String, String> env) throws UsageException {
        String ca = valueOrEnv(line, "--cacert", env, "LEASEHOLD_CACERT");
        String cert = valueOrEnv(line, "--cert", env, "LEASEHOLD_CERT");
        String key = valueOrEnv(line, "--cert-key", env, "LEASEHOLD_CERT_KEY");
        if (!line.has("--tls") && ca == null && cert == null && key == null) {
            return null;
        }
        if ((cert == null) != (key == null)) {
            throw new UsageException("--cert and --cert-key go together (a client certificate and its key)");
        }
        readable(line, "--cacert", "LEASEHOLD_CACERT", ca);
        readable(line, "--cert", "LEASEHOLD_CERT", cert);
        readable(line, "--cert-key", "LEASEHOLD_CERT_KEY", key);
        ClientTls.Builder b = ClientTls.builder();
        if (ca != null) {
            b.trustCertificates(Path.of(ca));
        }
        if (cert != null) {
            b.keyPem(Path.of(cert), Path.of(key));
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad TLS settings: " + e.getMessage());
        }
    }

    /** A file option names a readable file, else a usage error naming where the name came from. */
    private static void readable(CommandLine line, String option, String variable, String file) throws UsageException {
        if (file == null) {
            return;
        }
        Path path = Path.of(file);
        String from = line.value(option) != null ? option : "$" + variable;
        if (!Files.exists(path)) {
            throw new UsageException(from + " " + file + ": file not found");
        }
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new UsageException(from + " " + file + ": not a readable file");
        }
    }

    private static String valueOrEnv(CommandLine line, String option, Map<String, String> env, String variable) {
        String v = line.value(option);
        if (v == null) {
            v = env.get(variable);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    CommandLine line() {
        return line;
    }

    /** Standard output, for commands that print a body as it came (inspect, top with --json). */
    PrintStream out() {
        return out;
    }

    boolean json() {
        return line.has("--json");
    }

    boolean verbose() {
        return line.has("--verbose");
    }

    String servers() {
        return servers;
    }

    long timeoutMillis() {
        return timeoutMillis;
    }

    /**
     * A client for the servers: {@code --timeout} is its transport deadline (ping, wait-0
     * acquires) and caps its connect timeout. Opens no connection yet.
     */
    LeaseholdClient client() throws UsageException {
        Duration timeout = Duration.ofMillis(timeoutMillis);
        ClientOptions options = ClientOptions.builder()
                .poolSize(1)
                .transportDeadline(timeout)
                .connectTimeout(timeout.compareTo(ClientOptions.DEFAULT_CONNECT_TIMEOUT) < 0 ? timeout
                        : ClientOptions.DEFAULT_CONNECT_TIMEOUT)
                .threadNamePrefix("leasehold-cli")
                .tls(tls)
                .failFast(true) // say why at once when no server can be reached (-v shows each attempt)
                .build();
        try {
            return LeaseholdClient.create(options, servers.split(","));
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad server address '" + servers + "': " + e.getMessage());
        }
    }

    /** {@code --key}: present and a valid key (1 to 512 UTF-8 bytes, no newline). */
    String key() throws UsageException {
        String key = line.required("--key");
        try {
            Keys.utf8(key, Wire.DEFAULT_MAX_KEY_BYTES);
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad --key: " + e.getMessage());
        }
        return key;
    }

    /** {@code --token}: an unsigned 64-bit decimal, not 0. */
    long token() throws UsageException {
        String text = line.required("--token");
        try {
            long token = Long.parseUnsignedLong(text);
            if (token != 0) {
                return token;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("bad --token '" + text + "': a fencing token is a whole number from 1 to "
                + Long.toUnsignedString(-1L));
    }

    /**
     * {@code --wait} in milliseconds, 0 to 3600 s ({@code 250ms}, {@code 30s}, {@code 2m}): sent to
     * the millisecond on a revision 1.4 server, rounded up to whole seconds on a 1.3 one (which takes
     * at most 255 s; a wait above a server's max-wait is not sent: PROTOCOL.md 9.13).
     */
    long waitMillis() throws UsageException {
        String v = line.value("--wait");
        long ms = v == null ? 30_000 : Durations.millis("--wait", v);
        if (ms > Wire.MAX_WAIT_MILLIS_CEILING) {
            throw new UsageException("--wait must be 0 to " + Wire.MAX_WAIT_MILLIS_CEILING / 1000 + "s, not '" + v + "'");
        }
        return ms;
    }

    /**
     * {@code --shared [--limit N]}: a shared mode (limit 0 = read lock, the default), or exclusive
     * without {@code --shared}. {@code --limit} without {@code --shared} is a usage error.
     */
    HoldMode holdMode() throws UsageException {
        String v = line.value("--limit");
        if (!line.has("--shared")) {
            if (v != null) {
                throw new UsageException("--limit goes with --shared, as in --shared --limit 4");
            }
            return HoldMode.EXCLUSIVE;
        }
        if (v == null) {
            return HoldMode.READ;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 0 && n <= HoldMode.MAX_LIMIT) {
                return HoldMode.ofLimit(n);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UsageException("--limit " + v + " is not a number of permits from 0 (read lock) to 65535");
    }

    /**
     * {@code --value TEXT}: the exclusive grant's value (PROTOCOL.md 9.16.1) as UTF-8, at most 1024
     * bytes; null without it. Not with {@code --shared}: shared grants have no value.
     */
    byte[] value() throws UsageException {
        String v = line.value("--value");
        if (v == null) {
            return null;
        }
        if (line.has("--shared")) {
            throw new UsageException("--value goes with an exclusive acquire, not with --shared");
        }
        byte[] bytes = v.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > 1024) {
            throw new UsageException("--value is " + bytes.length + " bytes; a value is at most 1024");
        }
        return bytes;
    }

    /** Acquires in {@code mode} (see {@link #holdMode()}), with {@code value} when it is not null. */
    static AcquireOutcome acquire(LeaseholdClient client, String key, HoldMode mode, long waitMillis, int lease,
            byte[] value) {
        java.time.Duration wait = java.time.Duration.ofMillis(waitMillis);
        if (value != null) {
            return client.acquire(key, wait, lease, value);
        }
        return mode.isShared() ? client.acquireShared(key, mode.limit(), wait, lease) : client.acquire(key, wait, lease);
    }

    /** {@code --lease}, 1 to 255 whole seconds. */
    int leaseSeconds() throws UsageException {
        String v = line.value("--lease");
        return v == null ? 30 : Durations.seconds("--lease", v, 1, Wire.MAX_SECONDS);
    }

    /** A key fit for a one-line message: in double quotes, control characters escaped, long keys cut. */
    static String quote(String key) {
        return Keys.printable(key.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Converts a {@link System#nanoTime()} deadline to wall-clock epoch milliseconds, rounding
     * down (so the wall-clock value is never later than the monotonic deadline it stands for, as
     * long as the wall clock is not stepped).
     */
    static long epochMillis(long nanoDeadline) {
        long now = System.nanoTime();
        long wall = System.currentTimeMillis();
        return wall + Math.floorDiv(nanoDeadline - now, 1_000_000L);
    }

    static String instant(long epochMillis) {
        return Instant.ofEpochMilli(epochMillis).toString();
    }

    static Map<String, Object> fields(String outcome) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("outcome", outcome);
        return m;
    }

    static Json.Raw unsigned(long value) {
        return new Json.Raw(Long.toUnsignedString(value));
    }

    /**
     * Reports one result and returns its exit code: JSON on stdout with {@code --json}, else the
     * human line on stdout for OK and on stderr for anything else.
     */
    int report(ExitCode code, String human, Map<String, Object> json) {
        if (json()) {
            out.println(Json.object(json));
        } else if (code == ExitCode.OK) {
            out.println(human);
        } else {
            err.println("leasehold: " + human);
        }
        out.flush();
        return code.code();
    }

    /** One progress line on stderr with {@code --verbose}. */
    void progress(String message) {
        if (verbose()) {
            err.println("leasehold: " + message);
            err.flush();
        }
    }

    /** One line on stderr, always. */
    void warn(String message) {
        err.println("leasehold: " + message);
        err.flush();
    }

    /** Reports an acquire that did not grant (or was not delivered), for run and acquire. */
    int acquireFailure(String key, long wait, int lease, AcquireOutcome outcome) {
        Map<String, Object> m;
        if (outcome instanceof AcquireOutcome.TimedOut) {
            m = fields("timed_out");
            m.put("key", key);
            // The server's T does not say why: the key may be held, or in its lock-delay after a lease
            // ran out (PROTOCOL.md section 12), so the line names both.
            return report(ExitCode.TIMED_OUT, "timed out: " + quote(key) + (wait == 0
                    ? " is not free (--wait 0: one attempt)"
                    : " was not granted within the whole wait (" + Durations.format(wait) + ")")
                    + ": it is held, or in its lock-delay after an expired lease",
                    wait % 1000 == 0 ? with(m, "wait_s", wait / 1000) : with(m, "wait_ms", wait));
        } else if (outcome instanceof AcquireOutcome.Busy) {
            m = fields("busy");
            m.put("key", key);
            return report(ExitCode.BUSY, "busy: the server refused " + quote(key)
                    + " (one of its limits is reached, or it is shutting down)", m);
        } else if (outcome instanceof AcquireOutcome.Indeterminate i) {
            m = fields("indeterminate");
            m.put("key", key);
            m.put("reason", i.reason());
            return report(ExitCode.INDETERMINATE, "indeterminate: no definitive answer for " + quote(key) + " ("
                    + i.reason() + "); not holding it; a grant nobody saw ends with its lease, within " + lease
                    + "s", m);
        }
        if (outcome instanceof AcquireOutcome.Forbidden f) {
            m = fields("forbidden");
            m.put("key", key);
            m.put("reason", f.reason());
            return report(ExitCode.FORBIDDEN, "forbidden: the server does not let this client use " + quote(key)
                    + " (" + f.reason() + "; see its leasehold.acl); no grant exists", m);
        }
        if (outcome instanceof AcquireOutcome.LimitMismatch lm) {
            m = fields("limit_mismatch");
            m.put("key", key);
            m.put("limit", lm.requested());
            m.put("key_limit", lm.keyLimit());
            return report(ExitCode.LIMIT_MISMATCH, "limit mismatch: " + quote(key) + " is shared with --limit "
                    + lm.keyLimit() + ", not " + lm.requested() + " (0 = read lock); no grant", m);
        }
        String reason = ((AcquireOutcome.Unavailable) outcome).reason();
        m = fields("unavailable");
        m.put("key", key);
        m.put("server", servers);
        m.put("reason", reason);
        // Not sent because the server cannot take it (its max-wait, max-value-bytes or revision): no reach problem.
        boolean refusedBySession = reason.contains("it is not sent");
        return report(ExitCode.UNAVAILABLE, "unavailable: " + (refusedBySession ? reason + " (" + servers + ")"
                : "cannot reach " + servers + " (" + reason + ")"), m);
    }

    private static Map<String, Object> with(Map<String, Object> m, String k, Object v) {
        m.put(k, v);
        return m;
    }
}
