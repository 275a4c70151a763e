package dev.leasehold.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.Actuator.Response;
import dev.leasehold.testing.TestServer;

/**
 * The packaged default shows health statuses, not details: no data-directory path, disk size or
 * count on a management port that may be reachable. The Kubernetes probes still work.
 */
class HealthDetailsIntegrationTests {

    @Test
    void packagedDefaultHidesDetails() throws Exception {
        try (InputStream in = Files.newInputStream(Path.of("src/main/resources/application.yml"))) {
            Map<String, Object> yml = new Yaml().load(in);
            @SuppressWarnings("unchecked")
            Map<String, Object> health = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) yml
                    .get("management")).get("endpoint")).get("health");
            assertThat(health).containsEntry("show-details", "never").containsEntry("show-components", "always");
        }
        try (TestServer server = TestServer.start(Map.of("management.endpoint.health.show-details", "never"))) {
            Actuator actuator = new Actuator(server.httpPort());
            Response all = actuator.get("/actuator/health");
            assertThat(all.status()).isEqualTo(200);
            assertThat(all.<String>json("$.status")).isEqualTo("UP");
            assertThat(all.<String>json("$.components.leasehold.status")).isEqualTo("UP");
            assertThat(all.body()).doesNotContain("details", server.dataDir().toString(), "total", "free",
                    "sessions", "heldKeys");

            Response live = actuator.get("/actuator/health/liveness");
            assertThat(live.status()).isEqualTo(200);
            assertThat(live.<String>json("$.status")).isEqualTo("UP");
            Response ready = actuator.get("/actuator/health/readiness");
            assertThat(ready.status()).isEqualTo(200);
            assertThat(ready.<String>json("$.status")).isEqualTo("UP");
            assertThat(ready.body()).doesNotContain("details", "port");
        }
    }
}
