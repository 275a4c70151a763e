package dev.leasehold.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Ports;

/**
 * {@code bin/leasehold-cluster} as docs/cluster.md uses it: {@code start} returns once a leader
 * serves, {@code bin/leasehold cluster members} and {@code inspect} work against the nodes at once,
 * {@code stop} says which nodes it stopped. Three real server JVMs from the built jar, on free
 * ports (BASE_PORT), in a temp directory.
 */
class LocalClusterScriptIntegrationTests {

    private Path dir;
    private int base;

    @AfterEach
    void stopAndClean() throws Exception {
        if (dir != null) {
            run(60, "bin/leasehold-cluster", "stop", dir.toString()); // idempotent: kills what is left
            TestServer.deleteTree(dir);
        }
    }

    private record Result(int code, String out) {
    }

    private Result run(long timeoutSeconds, String... cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile("leasehold-cluster-script", ".out");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
            pb.environment().put("BASE_PORT", String.valueOf(base));
            pb.environment().put("START_WAIT", "240");
            pb.environment().put("LEASEHOLD_SERVER_JAR", System.getProperty("leasehold.server.jar",
                    Path.of("target").toAbsolutePath().resolve("leasehold-" + version() + ".jar").toString()));
            pb.environment().remove("LEASEHOLD_SERVER");
            Process p = pb.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", cmd) + " still running after " + timeoutSeconds + " s:\n"
                        + Files.readString(out));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static String version() throws IOException {
        try (var s = Files.list(Path.of("target"))) {
            return s.map(f -> f.getFileName().toString()).filter(n -> n.matches("leasehold-\\d.*\\.jar"))
                    .map(n -> n.substring("leasehold-".length(), n.length() - ".jar".length())).findFirst()
                    .orElseThrow(() -> new AssertionError("no server jar in target/: run the package phase"));
        }
    }

    @Test
    void startWaitsForALeaderAndTheClusterCommandsWorkOnItAtOnce() throws Exception {
        dir = Files.createTempDirectory("leasehold-cluster-script");
        base = Ports.freeRange(15); // protocol, HTTP and Raft ports of three nodes, below the ephemeral range
        Result start = run(300, "bin/leasehold-cluster", "start", dir.toString());
        assertThat(start.code()).as(start.out()).isZero();
        assertThat(start.out()).contains("waiting for a leader").containsPattern("n[123] is the leader and serves");

        String http = "--http=http://127.0.0.1:" + (base + 1);
        String seeds = "--server=127.0.0.1:" + base + ",127.0.0.1:" + (base + 2) + ",127.0.0.1:" + (base + 4);
        Result members = run(60, "bin/leasehold", seeds, "cluster", "members", http);
        assertThat(members.code()).as(members.out()).isZero();
        assertThat(members.out()).contains("n1").contains("n2").contains("n3");
        Result acquire = run(60, "bin/leasehold", seeds, "acquire", "--key", "demo", "--lease", "30s");
        assertThat(acquire.code()).as(acquire.out()).isZero();
        Result inspect = run(60, "bin/leasehold", seeds, "inspect", "demo", http);
        assertThat(inspect.out()).as("inspect answers (from the leader, or names it)").doesNotContain("does not expose the locks endpoint");

        Result stop = run(120, "bin/leasehold-cluster", "stop", dir.toString());
        assertThat(stop.code()).as(stop.out()).isZero();
        assertThat(stop.out().lines().filter(l -> l.matches("n[123] \\(pid \\d+\\) stopped")).toList())
                .as(stop.out()).hasSize(3);
        Result again = run(60, "bin/leasehold-cluster", "stop", dir.toString());
        assertThat(again.out()).contains("no node of " + dir + " was running");
    }
}
