package dev.leasehold.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.leasehold.testing.support.Wait;

/**
 * A {@link CandidateMain} in a JVM of its own: the test's handle to launch it, read what it
 * reported, send it {@code RESIGN}/{@code CLOSE}, and {@code kill -9}, {@code SIGSTOP} or
 * {@code SIGCONT} it. {@link #close()} kills it if it still runs.
 */
public final class CandidateProcess implements AutoCloseable {

    private final String identity;
    private final Process process;
    private final List<String> lines = new ArrayList<>();

    private CandidateProcess(String identity, Process process) {
        this.identity = identity;
        this.process = process;
        Thread reader = new Thread(this::read, "candidate-" + identity + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Launches a candidate for {@code key} on {@code servers} with the lease, writing to the store. */
    public static CandidateProcess launch(String servers, String key, String identity, int leaseSeconds,
            TermFencedStore store) throws IOException {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), CandidateMain.class.getName(),
                servers, key, identity, String.valueOf(leaseSeconds), String.valueOf(store.port()));
        return new CandidateProcess(identity, new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                synchronized (lines) {
                    lines.add(line);
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    public String identity() {
        return identity;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Everything it printed so far. */
    public List<String> lines() {
        synchronized (lines) {
            return new ArrayList<>(lines);
        }
    }

    /** Waits until it has printed a line starting with {@code prefix}; returns it. */
    public String await(String prefix, Duration timeout) {
        return Wait.until(identity + " to print " + prefix, timeout, Duration.ofMillis(10),
                () -> lines().stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null),
                l -> l != null);
    }

    /** Sends a command line ({@code RESIGN}, {@code CLOSE}) to its stdin. */
    public void send(String command) throws IOException {
        OutputStream in = process.getOutputStream();
        in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** {@code kill -9}: no close, no release; its term ends with its lease on the server. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** {@code kill -STOP} or {@code -CONT}: a pause as a long GC or a frozen VM makes one. */
    public void signal(String sig) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + sig, String.valueOf(pid())).inheritIO().start().waitFor(5, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A term's {@code START} line: who started it, and when. */
    public record Started(CandidateProcess candidate, long term, long nanos) {
    }

    /** Waits until one of {@code candidates} has started a term above {@code after}; the lowest such. */
    public static Started termAbove(List<CandidateProcess> candidates, long after, Duration within) {
        return Wait.until("a term above " + after + " to start", within, Duration.ofMillis(5), () -> {
            Started lowest = null;
            for (CandidateProcess c : candidates) {
                for (String line : c.lines()) {
                    String[] w = line.split(" ");
                    if (w[0].equals("START") && Long.parseLong(w[1]) > after
                            && (lowest == null || Long.parseLong(w[1]) < lowest.term())) {
                        lowest = new Started(c, Long.parseLong(w[1]), Long.parseLong(w[2]));
                    }
                }
            }
            return lowest;
        }, s -> s != null);
    }

    @Override
    public String toString() {
        return identity + " (pid " + pid() + ")";
    }
}
