package dev.leasehold.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.leasehold.docs.DocExamples.Run;
import dev.leasehold.docs.DocExamples.Skipped;
import dev.leasehold.docs.DocExamples.Step;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The docs are tested (issue 39): the shell examples of the README's quick start and of
 * docs/cli.md are run as a new user runs them, against the built server jar on free ports with a
 * new data directory, and what they print is compared with what the pages show (modulo tokens,
 * times and ports: {@link DocOutput}). Which blocks run and how a block is marked as not run:
 * {@link DocExamples}, docs/testing.md.
 *
 * <p>Each page gets its own server, so its tokens start where a user's first start does. The
 * commands run with {@code sh -c} in a temp directory laid out like a source checkout after
 * {@code ./mvnw package} ({@code bin/leasehold}, {@code client/target/leasehold-client-<v>.jar}),
 * with {@code LEASEHOLD_SERVER} naming the test's server and the doc's default ports 7420 and
 * 7421 in a command replaced by the server's.
 */
class DocsIntegrationTests {

    private static final Pattern LISTENING = Pattern.compile("Leasehold protocol listening on [^:]+:(\\d+)");
    private static final Pattern HTTP_PORT = Pattern.compile("Netty started on port (\\d+)");
    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(60);

    @Test
    void theReadmeQuickStartPrintsWhatItShows() throws Exception {
        runPage("README.md", "Quick start");
    }

    @Test
    void theCliExamplesPrintWhatTheyShow() throws Exception {
        runPage("docs/cli.md", null);
    }

    private static void runPage(String file, String section) throws Exception {
        List<Step> steps = DocExamples.parse(file, Files.readString(Path.of(file), StandardCharsets.UTF_8), section);
        assertThat(steps).as("%s has examples to run", file).anyMatch(s -> s instanceof Run);
        Path work = Files.createTempDirectory("leasehold-docs");
        try (Server server = Server.start(work.resolve("data"))) {
            checkout(work.resolve("checkout"));
            List<String> failures = new ArrayList<>();
            List<Long> docTokens = new ArrayList<>();
            List<Long> runTokens = new ArrayList<>();
            for (Step step : steps) {
                if (step instanceof Skipped skipped) {
                    System.out.printf("%s:%d: not run (%s)%n", file, skipped.line(), skipped.reason());
                    continue;
                }
                Run run = (Run) step;
                Result result = execute(run, work.resolve("checkout"), server);
                String failure = check(run, result, server);
                System.out.printf("%s:%d: %s (%d ms)%n", file, run.line(), failure == null ? "as shown" : "DRIFT",
                        result.millis());
                if (failure != null) {
                    failures.add(failure);
                } else if (run.expected() != null) {
                    docTokens.addAll(DocOutput.tokens(run.expected()));
                    runTokens.addAll(DocOutput.tokens(result.lines()));
                }
            }
            if (failures.isEmpty()) {
                String order = DocOutput.tokenOrder(docTokens, runTokens);
                if (order != null) {
                    failures.add(file + ": across its examples, " + order);
                }
            }
            if (!failures.isEmpty()) {
                fail(file + " shows what its examples no longer print; fix the page (or the code):"
                        + String.join("", failures) + "\nThe test's server log:\n" + server.output());
            }
        } finally {
            TestServer.deleteTree(work);
        }
    }

    /** What a step printed (stdout and stderr, interleaved as a terminal shows them) and its exit code. */
    private record Result(String script, int exitCode, List<String> lines, long millis) {
    }

    private static Result execute(Run run, Path checkout, Server server) throws IOException, InterruptedException {
        // The doc's defaults, 7420 (protocol) and 7421 (management), are the test server's free ports.
        String script = run.script().replaceAll("\\b7420\\b", String.valueOf(server.port()))
                .replaceAll("\\b7421\\b", String.valueOf(server.httpPort()));
        Path out = Files.createTempFile("leasehold-docs", ".out");
        long start = System.nanoTime();
        try {
            ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", script).directory(checkout.toFile())
                    .redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            // What the user's shell would not have: the build's JVM options (a "Picked up ..." line).
            pb.environment().keySet().removeIf(k -> k.startsWith("LEASEHOLD_") || k.equals("JAVA_TOOL_OPTIONS")
                    || k.equals("_JAVA_OPTIONS") || k.equals("JDK_JAVA_OPTIONS"));
            pb.environment().put("LEASEHOLD_SERVER", "127.0.0.1:" + server.port());
            Process p = pb.start();
            if (!p.waitFor(STEP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(run.file() + ":" + run.line() + ": still running after " + STEP_TIMEOUT.toSeconds()
                        + " s: " + script + "\nprinted so far:\n" + Files.readString(out));
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            return new Result(script, p.exitValue(), Files.readString(out, StandardCharsets.UTF_8).lines().toList(), millis);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** Null if the run printed what the doc shows and exited 0, else the message the next engineer reads. */
    private static String check(Run run, Result result, Server server) {
        String why = null;
        if (result.exitCode() != 0) {
            why = "it exited with " + result.exitCode() + " (an example must exit 0; a page shows a failure's code"
                    + " with `; echo $?`)";
        } else if (run.expected() != null) {
            why = DocOutput.compare(run.expected(), result.lines());
        }
        if (why == null) {
            return null;
        }
        return String.format("%n%s:%d: %s%n  ran: sh -c '%s' (LEASEHOLD_SERVER=127.0.0.1:%d, management port %d)%n"
                + "  the doc shows (%s:%d):%n%s%n  it printed:%n%s%n", run.file(), run.line(), why,
                result.script().strip(), server.port(), server.httpPort(), run.file(), run.expectedLine(),
                run.expected() == null ? "    (no output shown: only exit 0 is checked)" : indent(run.expected()),
                indent(result.lines()));
    }

    private static String indent(List<String> lines) {
        return lines.isEmpty() ? "    (nothing)" : lines.stream().map(l -> "    | " + l).collect(Collectors.joining("\n"));
    }

    /**
     * A source checkout after {@code ./mvnw package}, as far as the examples need one: the
     * repository's {@code bin/leasehold} and the built client jar where it looks for it.
     */
    private static void checkout(Path dir) throws IOException {
        Files.createDirectories(dir.resolve("bin"));
        Files.createDirectories(dir.resolve("client/target"));
        Files.copy(Path.of("bin/leasehold"), dir.resolve("bin/leasehold"), StandardCopyOption.COPY_ATTRIBUTES);
        Path jar = builtJar(Path.of("client/target"), "leasehold-client-");
        Files.createSymbolicLink(dir.resolve("client/target").resolve(jar.getFileName()), jar.toAbsolutePath());
    }

    /** {@code dir/prefix<version>.jar}, the one {@code package} built (not its tests, sources or javadoc). */
    static Path builtJar(Path dir, String prefix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().matches(Pattern.quote(prefix) + "\\d[^/]*(?<!-tests|-sources|-javadoc|-embedded)\\.jar"))
                    .findFirst().orElseThrow(() -> new AssertionError("no " + prefix + "<version>.jar in " + dir.toAbsolutePath()
                            + ": the docs test runs after the package phase (./mvnw -B verify)"));
        }
    }

    /** The built server jar ({@code java -jar target/leasehold-<v>.jar}) on free ports and a new data directory. */
    private static final class Server implements AutoCloseable {
        private final Process process;
        private final Path log;
        private int port;
        private int httpPort;

        private Server(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        static Server start(Path dataDir) throws IOException {
            Path jar = builtJar(Path.of("target"), "leasehold-");
            Path log = Files.createTempFile("leasehold-docs-server", ".log");
            Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-jar", jar.toString(),
                    "--leasehold.port=0", "--server.port=0", "--leasehold.io-threads=2",
                    "--leasehold.data-dir=" + dataDir).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            Server server = new Server(process, log);
            try {
                // Generous: a JVM start took 35 s at load average 14; it only bounds a hang.
                String out = Wait.until("the server jar (pid " + process.pid() + ") to log its protocol and HTTP ports",
                        Duration.ofSeconds(180), Duration.ofMillis(50), () -> {
                            String now = server.output();
                            if (!process.isAlive()) {
                                throw Wait.giveUp("it exited with " + process.exitValue() + ":\n" + now);
                            }
                            return now;
                        }, now -> LISTENING.matcher(now).find() && HTTP_PORT.matcher(now).find());
                server.port = port(LISTENING, out);
                server.httpPort = port(HTTP_PORT, out);
            } catch (RuntimeException | Error e) {
                server.close();
                throw e;
            }
            return server;
        }

        private static int port(Pattern pattern, String out) {
            Matcher m = pattern.matcher(out);
            m.find();
            return Integer.parseInt(m.group(1));
        }

        int port() {
            return port;
        }

        int httpPort() {
            return httpPort;
        }

        String output() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(log unreadable: " + e + ")";
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
                Files.deleteIfExists(log);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException ignored) {
                // a temp file
            }
        }
    }
}
