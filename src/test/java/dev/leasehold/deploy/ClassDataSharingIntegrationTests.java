package dev.leasehold.deploy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.support.Wait;

/**
 * The AppCDS archive that {@code ./mvnw package} made ({@code bin/leasehold-cds}, target/cds/;
 * docs/deploy.md, "Start time") is one this JVM accepts, and the server started from it grants a
 * lock. {@code -Xshare:on} turns an archive the JVM would silently skip (a mismatched jar, a
 * different JVM) into a failed start. Skipped where the build made none ({@code -Dcds.skip=true},
 * not Unix) or left an old one behind (older than the jar).
 */
class ClassDataSharingIntegrationTests {

    private static final Pattern LISTENING = Pattern.compile("Leasehold protocol listening on [^:]+:(\\d+) \\(");

    @Test
    void theServerStartsFromTheBuildsArchiveAndGrants(@TempDir Path dir) throws Exception {
        Path jar = Path.of(System.getProperty("leasehold.server.jar", "target/leasehold.jar"));
        Path cds = Path.of("target", "cds");
        Path archive = cds.resolve("leasehold.jsa");
        assumeTrue(Files.isRegularFile(archive) && Files.isRegularFile(jar)
                && !Files.getLastModifiedTime(jar).toInstant().isAfter(Files.getLastModifiedTime(archive).toInstant()),
                "no current target/cds/leasehold.jsa (built with -Dcds.skip=true?)");
        Path log = dir.resolve("server.log");
        Process server = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xshare:on", "-XX:SharedArchiveFile=" + archive.toAbsolutePath(), "-jar",
                cds.resolve("leasehold.jar").toAbsolutePath().toString(), "--leasehold.port=0", "--server.port=0",
                "--leasehold.data-dir=" + dir.resolve("data")))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            // The log is a file the server writes; nothing signals a new line, so poll.
            int port = Wait.until("the protocol port in " + log, Duration.ofSeconds(120), Duration.ofMillis(100),
                    () -> {
                        String out = Files.readString(log, UTF_8);
                        if (!server.isAlive()) {
                            throw Wait.giveUp("the server exited with " + server.exitValue() + ":\n" + out);
                        }
                        Matcher m = LISTENING.matcher(out);
                        return m.find() ? Integer.parseInt(m.group(1)) : -1;
                    }, p -> p > 0);
            try (RawClient client = new RawClient(port)) {
                client.send(new Request.Acquire(0, 5, 1, "cds".getBytes(UTF_8)));
                assertThat(client.next()).isInstanceOf(Answer.Acquired.class);
            }
        } finally {
            stop(server);
        }
    }

    private static void stop(Process server) throws IOException, InterruptedException {
        server.destroy();
        if (!server.waitFor(30, TimeUnit.SECONDS)) {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
