package dev.leasehold.client.cli;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Runs the command line as a real separate JVM ({@code java -cp <classes> dev.leasehold.client.cli.Main})
 * with stdout and stderr in files, and kills everything it started on {@link #killAll()}.
 */
public final class CliProcess {

    /** A finished run. */
    public record Result(int exitCode, String out, String err) {
    }

    private final Path dir;
    private final List<Process> started = new CopyOnWriteArrayList<>();
    private final List<Long> orphans = new CopyOnWriteArrayList<>();
    private int n;

    public CliProcess(Path dir) {
        this.dir = dir;
    }

    /** Starts the CLI with extra environment variables; its output goes to files in the temp dir. */
    public synchronized Started start(Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(classes().toString());
        cmd.add(Main.class.getName());
        cmd.addAll(List.of(args));
        int id = ++n;
        Path out = dir.resolve("cli-" + id + ".out");
        Path err = dir.resolve("cli-" + id + ".err");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().remove("LEASEHOLD_SERVER");
        pb.environment().putAll(env);
        Process p = pb.start();
        started.add(p);
        return new Started(p, List.of(args), out, err);
    }

    /** Runs the CLI to its end (at most 60 s). */
    public Result run(Map<String, String> env, String... args) throws Exception {
        return start(env, args).await();
    }

    public Result run(String... args) throws Exception {
        return run(Map.of(), args);
    }

    /** SIGKILL to every CLI started and everything under it. */
    /**
     * Also kills {@code pid} in {@link #killAll()}: a command's child that a test learned of (its
     * pid written to a file), which may outlive the CLI that started it once that CLI is killed.
     */
    public void killLater(long pid) {
        orphans.add(pid);
    }

    public void killAll() {
        for (long pid : orphans) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : started) {
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The compiled main classes (target/classes): the CLI needs nothing else. */
    static Path classes() {
        try {
            return Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A started CLI. */
    public record Started(Process process, List<String> args, Path out, Path err) {

        public Result await() throws Exception {
            long t0 = System.nanoTime();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("gave up after 60 s waiting for the CLI (" + String.join(" ", args)
                        + ") to end; stderr: " + read(err));
            }
            System.out.println("CLI " + String.join(" ", args) + ": " + (System.nanoTime() - t0) / 1_000_000
                    + " ms after await; exit " + process.exitValue() + "; stderr: " + read(err));
            return new Result(process.exitValue(), read(out), read(err));
        }

        public String stderr() throws IOException {
            return read(err);
        }
    }

    static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }
}
