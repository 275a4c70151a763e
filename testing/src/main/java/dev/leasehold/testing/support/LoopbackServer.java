package dev.leasehold.testing.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real Leasehold server for the adapters' tests: {@code java -jar target/leasehold-<v>.jar} (the
 * jar the server module just built; its path comes from the system property
 * {@code leasehold.server.jar}, set by the build) on loopback, random ports, a fresh data
 * directory and the recovery grace off. JDK only, so it fits any module's tests.
 *
 * <p>{@link #shared()} starts one server per test JVM (tests use distinct keys); a JVM shutdown
 * hook kills it and deletes its directory. {@link #start()} gives a private one to close.
 */
public final class LoopbackServer implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("Leasehold protocol listening on [^:]+:(\\d+)");
    private static final Pattern HTTP = Pattern.compile("Netty started on port (\\d+)");
    private static final Pattern WAITERS = Pattern.compile("(?m)^leasehold_waiters(?:\\{[^}]*\\})? ([0-9.eE+-]+)$");
    private static LoopbackServer shared;

    private final Process process;
    private final Path dir;
    private final Path log;
    private final int port;
    private final int httpPort;

    private LoopbackServer(Process process, Path dir, Path log, int port, int httpPort) {
        this.process = process;
        this.dir = dir;
        this.log = log;
        this.port = port;
        this.httpPort = httpPort;
    }

    /** One server for the whole test JVM, started on first use. */
    public static synchronized LoopbackServer shared() {
        if (shared == null) {
            shared = start();
            LoopbackServer s = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(s::close, "leasehold-test-server-stop"));
        }
        return shared;
    }

    /** A server of its own; close it. */
    public static LoopbackServer start() {
        String jar = System.getProperty("leasehold.server.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("system property leasehold.server.jar must name the built server jar"
                    + " (run the tests through Maven from the repository root); it is " + jar);
        }
        try {
            Path dir = Files.createTempDirectory("leasehold-loopback");
            Path log = dir.resolve("server.log");
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
                    "-jar", jar,
                    "--leasehold.port=0", "--server.port=0", "--leasehold.io-threads=2",
                    "--leasehold.recovery-grace=0s",
                    "--leasehold.data-dir=" + dir.resolve("data")));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                // Polling the log of another process: nothing to wait on. A JVM start took 35 s at
                // load average 14 (docs/testing.md); 90 s only bounds a hang.
                String out = Wait.until("the server jar (pid " + p.pid() + ") to log its protocol and HTTP ports",
                        Duration.ofSeconds(90), Duration.ofMillis(25), () -> {
                            String now = Files.readString(log, StandardCharsets.UTF_8);
                            if (!p.isAlive() && !(LISTENING.matcher(now).find() && HTTP.matcher(now).find())) {
                                throw Wait.giveUp("it exited with " + p.exitValue() + ":\n" + now);
                            }
                            return now;
                        }, now -> LISTENING.matcher(now).find() && HTTP.matcher(now).find());
                Matcher m = LISTENING.matcher(out);
                Matcher http = HTTP.matcher(out);
                m.find();
                http.find();
                return new LoopbackServer(p, dir, log, Integer.parseInt(m.group(1)), Integer.parseInt(http.group(1)));
            } catch (AssertionError e) {
                p.destroyForcibly();
                throw new AssertionError(e.getMessage() + (e.getMessage().contains(":\n") ? "" : "; its log:\n"
                        + Files.readString(log)), e);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The protocol port on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** The HTTP (Actuator) port on 127.0.0.1. */
    public int httpPort() {
        return httpPort;
    }

    /**
     * Acquires queued on the server right now, all keys ({@code leasehold_waiters}, scraped): what
     * a test waits on to know that a request reached the server's queue, instead of sleeping.
     */
    public long waiters() {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/actuator/prometheus"))
                .timeout(Duration.ofSeconds(10)).GET().build();
        try {
            HttpResponse<String> r = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
                    .send(request, HttpResponse.BodyHandlers.ofString());
            Matcher m = WAITERS.matcher(r.body());
            if (r.statusCode() != 200 || !m.find()) {
                throw new IllegalStateException("no leasehold_waiters in the scrape (" + r.statusCode() + ")");
            }
            return (long) Double.parseDouble(m.group(1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@code 127.0.0.1:port}, as the client takes it. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /** What the server printed so far. */
    public String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** Kills the process and deletes its directory. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // best effort: the temp directory
        }
    }
}
