package dev.leasehold.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * The recovery grace with {@code auto} on a real server over real sockets (PROTOCOL.md
 * section 8): a fresh data directory grants at once and says why, and a lease longer than the
 * written horizon is answered after the horizon write without reordering the session's answers.
 */
class RecoveryGraceIntegrationTests {

    static final Map<String, String> AUTO = Map.of("leasehold.recovery-grace", "auto");

    @Test
    void aFreshDataDirectoryGrantsAtOnceAndHealthSaysFirstStart() throws Exception {
        try (TestServer server = TestServer.start(AUTO); RawClient c = new RawClient(server.port())) {
            long sent = System.nanoTime();
            c.send(new Request.Acquire(0, 5, 1, "fresh".getBytes(UTF_8)));
            assertThat(c.next()).isInstanceOf(Answer.Acquired.class);
            System.out.printf("first grant on a fresh data directory: %.1f ms after the Acquire%n",
                    (System.nanoTime() - sent) / 1e6);
            Actuator.Response health = new Actuator(server.httpPort()).get("/actuator/health");
            assertThat(health.<String>json("$.components.leasehold.details.recoveryGraceReason"))
                    .isEqualTo("first start");
            assertThat(health.<String>json("$.components.leasehold.details.recoveryGrace")).isEqualTo("auto");
            assertThat(new Actuator(server.httpPort()).scrape().value("leasehold_recovery_grace_remaining_seconds"))
                    .isZero();
        }
    }

    @Test
    void answersThatWaitForTheHorizonKeepTheSessionsOrderForTheSameToken() throws Exception {
        try (TestServer server = TestServer.start(AUTO); RawClient c = new RawClient(server.port())) {
            byte[] key = "long/lease".getBytes(UTF_8);
            // 200 s is far beyond the 8 s the start-up horizon covers: this A waits for a write.
            c.send(new Request.Acquire(0, 200, 1, key));
            Answer a = c.next(10_000);
            assertThat(a).isInstanceOf(Answer.Acquired.class);
            long token = ((Answer.Acquired) a).token();
            // Extend to 255 s (another write), then Release and Ping pipelined behind it: E, R, P in order.
            c.send(new Request.Extend(255, token, key), new Request.Release(token, key), new Request.Ping(7));
            assertThat(c.next(10_000)).isEqualTo(new Answer.Extended(token));
            assertThat(c.next(10_000)).isEqualTo(new Answer.Released(token));
            assertThat(c.next(10_000)).isEqualTo(new Answer.Pong(7));
            Actuator.Scrape scrape = new Actuator(server.httpPort()).scrape();
            assertThat(scrape.value("leasehold_lease_horizon_waits_total")).isGreaterThanOrEqualTo(2);
            assertThat(scrape.value("leasehold_lease_horizon_writes_total")).isGreaterThanOrEqualTo(3);
            // 255 s is in use now: the next one goes out without a write.
            c.send(new Request.Acquire(0, 255, 2, key));
            assertThat(c.next(10_000)).isInstanceOf(Answer.Acquired.class);
        }
    }

    @Test
    void aBadFrameAfterAGrantWaitingForTheHorizonStillGetsTheGrantFirst() throws Exception {
        try (TestServer server = TestServer.start(AUTO); RawClient c = new RawClient(server.port())) {
            // 200 s needs a horizon write; the unknown op right behind it decides the X meanwhile.
            c.send(new Request.Acquire(0, 200, 1, "before/x".getBytes(UTF_8)));
            c.sendBytes(new byte[] {'Z', '\n'});
            assertThat(c.next(10_000)).isInstanceOf(Answer.Acquired.class);
            assertThat(c.next(10_000)).isInstanceOf(Answer.Error.class);
            assertThat(c.closedByServer(5_000)).isTrue();
        }
    }
}
