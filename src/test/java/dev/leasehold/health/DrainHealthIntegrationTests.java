package dev.leasehold.health;

import static dev.leasehold.health.HealthIntegrationTests.acquire;
import static dev.leasehold.health.HealthIntegrationTests.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.Actuator.Response;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/** Shutdown as the probes see it: drain (readiness OUT_OF_SERVICE), then the protocol port closes. */
class DrainHealthIntegrationTests {

    private static final Duration AWAIT = Duration.ofSeconds(10);

    @Test
    void drainingTakesReadinessOutOfServiceButLivenessStaysUp() throws Exception {
        try (TestServer own = TestServer.start(); RawClient holder = new RawClient(own.port());
                RawClient waiter = new RawClient(own.port())) {
            Actuator http = new Actuator(own.httpPort());
            assertThat(http.get("/actuator/health/readiness").status()).isEqualTo(200);
            long token = ((Answer.Acquired) holder.send(acquire("h/drain", 0, 30, 1)).next()).token();
            waiter.send(acquire("h/drain", 30, 30, 2));
            Wait.until("one waiter queued on the server (port " + own.port() + ")", AWAIT,
                    own.bean(LockRegistry.class)::waiters, n -> n == 1);

            own.bean(LockRegistry.class).drain();

            assertThat(waiter.next()).isEqualTo(new Answer.Busy(2));
            Response ready = http.get("/actuator/health/readiness");
            assertThat(ready.status()).as(ready.body()).isEqualTo(503);
            assertThat(ready.<String>json("$.status")).isEqualTo("OUT_OF_SERVICE");
            assertThat(ready.<String>json("$.components.leaseholdReadiness.status")).isEqualTo("OUT_OF_SERVICE");
            assertThat(ready.<Boolean>json("$.components.leaseholdReadiness.details.draining")).isTrue();
            assertThat(http.get("/actuator/health/liveness").status()).isEqualTo(200);
            Response all = http.get("/actuator/health");
            assertThat(all.<String>json("$.components.leasehold.status")).isEqualTo("OUT_OF_SERVICE");
            assertThat(http.scrape().value("leasehold_busy_total", "reason", "draining")).isEqualTo(1);
            // Release still works while draining
            assertThat(holder.send(new Request.Release(token, key("h/drain"))).next()).isEqualTo(new Answer.Released(token));

            // the shutdown order: drain, then the protocol port closes
            own.bean(LeaseholdServer.class).stop();
            Response stopped = http.get("/actuator/health");
            assertThat(stopped.status()).isEqualTo(503);
            assertThat(stopped.<String>json("$.components.leasehold.status")).isEqualTo("DOWN");
            assertThat(stopped.<String>json("$.components.leasehold.details.error")).isEqualTo("protocol port not bound");
            assertThat(http.get("/actuator/health/readiness").<String>json("$.status")).isEqualTo("OUT_OF_SERVICE");
            assertThat(http.get("/actuator/health/liveness").status()).isEqualTo(200);
        }
    }

}
