package dev.leasehold.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.leasehold.LeaseholdApplication;
import dev.leasehold.testing.support.Wait;

/**
 * The real server in its own JVM ({@code java -cp <test classpath> dev.leasehold.LeaseholdApplication}),
 * for what only a separate process can show: {@code kill -9}, SIGTERM, the exit, and what the
 * log says. Random ports; the protocol port is read from the log line
 * "Leasehold protocol listening on 127.0.0.1:NNNN". {@link #close()} kills it (-9) if still alive.
 */
public final class ServerProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("Leasehold protocol listening on [^:]+:(\\d+)");
    private static final Pattern GRACE = Pattern.compile("Recovery grace (\\d+) ms");
    private static final Pattern GRACE_REASON = Pattern.compile("Recovery grace \\d+ ms \\(([a-z ]+)\\)");

    private final Process process;
    private final Path log;
    private int port = -1;

    private ServerProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Starts a server on {@code dataDir} and waits until its protocol port is listening. */
    public static ServerProcess start(Path dataDir, Map<String, String> properties) throws IOException {
        ServerProcess p = launch(dataDir, properties);
        try {
            p.awaitListening(180_000); // a JVM start took 35 s at load average 14: generous, it only bounds a hang
        } catch (RuntimeException | AssertionError e) {
            p.close();
            throw e;
        }
        return p;
    }

    /**
     * Starts a server and does not wait (for start-ups expected to fail). The protocol port is
     * random unless {@code properties} set {@code leasehold.port} (restarts on the same port).
     */
    public static ServerProcess launch(Path dataDir, Map<String, String> properties) throws IOException {
        return launch(dataDir, properties, List.of(), Map.of());
    }

    /**
     * As {@link #launch(Path, Map)}, with a command prefix (for example {@code ip netns exec ns},
     * which execs the JVM, so {@link #pid()} is still the server's) and extra environment.
     */
    public static ServerProcess launch(Path dataDir, Map<String, String> properties, List<String> prefix,
            Map<String, String> env) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"),
                LeaseholdApplication.class.getName()));
        // A property given twice on the command line binds as "a,b": the caller's value replaces the default.
        Map<String, String> all = new java.util.LinkedHashMap<>(Map.of("leasehold.port", "0", "server.port", "0",
                "leasehold.io-threads", "2", "leasehold.data-dir", dataDir.toString()));
        all.putAll(properties);
        all.forEach((k, v) -> cmd.add("--" + k + "=" + v));
        Path log = Files.createTempFile("leasehold-process", ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process process = pb.start();
        return new ServerProcess(process, log);
    }

    private void awaitListening(long timeoutMillis) {
        Output out = Wait.until("the server (pid " + pid() + ") to log its protocol port", Duration.ofMillis(timeoutMillis),
                () -> {
                    Output now = new Output(output());
                    if (!now.has(LISTENING) && !process.isAlive()) {
                        throw Wait.giveUp("it exited with " + process.exitValue() + " before listening:\n" + now.text());
                    }
                    return now;
                }, now -> now.has(LISTENING));
        Matcher m = LISTENING.matcher(out.text());
        m.find();
        port = Integer.parseInt(m.group(1));
    }

    public int port() {
        return port;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    /** Everything the process printed so far. */
    public String output() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    /** The last {@code lines} lines the process printed (for a failure message that says what a node was doing). */
    public String tail(int lines) throws IOException {
        List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /**
     * The last {@code lines} lines of each node's log under its name, for a failure message that
     * says what each node was doing; {@code null} nodes are skipped.
     */
    public static String lastLogs(String[] names, ServerProcess[] nodes, int lines) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < nodes.length; i++) {
            if (nodes[i] != null) {
                b.append("\n--- ").append(names[i]).append(" last logged:\n").append(nodes[i].tail(lines));
            }
        }
        return b.toString();
    }

    /** The recovery grace it logged at start, in ms (0 if it logged none, e.g. grace off). */
    public long graceMillis() throws IOException {
        Matcher m = GRACE.matcher(output());
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** Why it logged the grace it did ("first start", "crash horizon", ...), or "" if it logged none. */
    public String graceReason() throws IOException {
        Matcher m = GRACE_REASON.matcher(output());
        return m.find() ? m.group(1) : "";
    }

    /**
     * Sends the signal {@code sig} ({@code STOP}, {@code CONT}, {@code TERM}, ...) through
     * {@code kill}: STOP pauses the process as a long GC pause or a frozen VM would, with its
     * sockets open; CONT wakes it.
     */
    public void signal(String sig) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + sig, String.valueOf(pid())).inheritIO().start().waitFor(5, TimeUnit.SECONDS);
    }

    /** {@code kill -9}: no shutdown hook, no drain, nothing written. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGTERM (what Kubernetes sends); returns the exit code, or null if still alive after the timeout. */
    public Integer terminate(long timeoutMillis) throws InterruptedException {
        process.destroy();
        return process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS) ? process.exitValue() : null;
    }

    /**
     * Waits until the process's output contains {@code text}; fails at once if the process exits
     * first, or after {@code timeoutMillis}, with the whole output.
     *
     * @param name the node's name in the failure message
     */
    public void awaitOutput(String name, String text, long timeoutMillis) throws IOException, InterruptedException {
        // The output is a file another process writes; nothing signals a new line, so poll.
        Wait.until(name + " to log '" + text + "'", Duration.ofMillis(timeoutMillis), Duration.ofMillis(50), () -> {
            String out = output();
            if (!out.contains(text) && !isAlive()) {
                throw Wait.giveUp(name + " exited with " + process.exitValue() + " first:\n" + out);
            }
            return new Output(out);
        }, now -> now.text().contains(text));
    }

    /** A process's output as a wait's state: prints the whole output, which a failure then shows. */
    private record Output(String text) {
        boolean has(Pattern pattern) {
            return pattern.matcher(text).find();
        }

        @Override
        public String toString() {
            return "the output below\n" + text;
        }
    }

    /** Waits for the process to exit by itself; its exit code, or null on timeout. */
    public Integer awaitExit(long timeoutMillis) throws InterruptedException {
        return process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS) ? process.exitValue() : null;
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            Files.deleteIfExists(log);
        } catch (IOException ignored) {
            // temp file
        }
    }

    /** Properties as a map, from "k", "v", "k", "v". */
    public static Map<String, String> props(String... kv) {
        Map<String, String> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }
}
