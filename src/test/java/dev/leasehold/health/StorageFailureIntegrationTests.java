package dev.leasehold.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.Actuator.Response;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * A real data-directory failure: the directory is replaced by a plain file while the server
 * runs (chmod would not stop root), so the token store's next fsync'd write fails. Health goes
 * DOWN naming the file, Acquires get B for "storage", the probes stay UP, and everything heals
 * once the directory is back.
 */
class StorageFailureIntegrationTests {

    @Test
    void unwritableDataDirectoryIsDownInHealthButNotInTheProbesAndHeals() throws Exception {
        // two tokens per block: the second grant already asks for the next block
        try (TestServer server = TestServer.start(Map.of("leasehold.token-block-size", "2"));
                RawClient c = new RawClient(server.port())) {
            Actuator http = new Actuator(server.httpPort());
            Path dir = server.dataDir();
            TestServer.deleteTree(dir);
            Files.createFile(dir);

            Wait.untilAsserted("the server (port " + server.port() + ") to answer B once its data directory is a file",
                    Duration.ofSeconds(10), () -> {
                Answer a = c.send(new Request.Acquire(0, 5, 1, "s/k".getBytes())).next();
                if (a instanceof Answer.Acquired granted) {
                    c.send(new Request.Release(granted.token(), "s/k".getBytes())).next();
                }
                assertThat(a).isEqualTo(new Answer.Busy(1));
            });

            Response all = http.get("/actuator/health");
            assertThat(all.status()).as(all.body()).isEqualTo(503);
            assertThat(all.<String>json("$.components.leasehold.status")).isEqualTo("DOWN");
            assertThat(all.<List<String>>json("$.components.leasehold.details.storageProblems"))
                    .anySatisfy(p -> assertThat(p).contains(dir.resolve("tokens").toString()));
            assertThat(http.get("/actuator/health/liveness").status()).isEqualTo(200);
            assertThat(http.get("/actuator/health/readiness").status()).isEqualTo(200);
            assertThat(http.scrape().value("leasehold_busy_total", "reason", "storage")).isGreaterThanOrEqualTo(1);
            // The token store, and the lease horizon too if it needed a write meanwhile.
            assertThat(http.scrape().value("leasehold_storage_failing")).isBetween(1.0, 2.0);

            Files.delete(dir);
            Files.createDirectories(dir);
            // the store retries (at most once a second) when tokens are asked for
            // 20 s, was 10 s: the store retries at most once a second, each retry an fsync on a loaded disk.
            Wait.untilAsserted("the server (port " + server.port() + ") to grant again once its data directory is back",
                    Duration.ofSeconds(20), () -> {
                Answer a = c.send(new Request.Acquire(0, 5, 2, "s/k".getBytes())).next();
                assertThat(a).isInstanceOf(Answer.Acquired.class);
                c.send(new Request.Release(((Answer.Acquired) a).token(), "s/k".getBytes())).next();
            });
            Response healed = http.get("/actuator/health");
            assertThat(healed.status()).as(healed.body()).isEqualTo(200);
            assertThat(healed.<String>json("$.components.leasehold.status")).isEqualTo("UP");
        }
    }
}
