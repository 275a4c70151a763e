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

    /**
     * PROTOCOL.md 16.2: during the grace a watch's key is {@code G}; when the grace ends it is free
     * (cause 6), or granted to the acquire that waited (cause 1). Real time passes: an 8 s grace.
     */
    @Test
    void aWatchSeesTheGraceAndItsEnd() throws Exception {
        try (TestServer server = TestServer.start(Map.of("leasehold.recovery-grace", "8s"));
                RawClient observer = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            dev.leasehold.registry.LockRegistry registry = server.bean(dev.leasehold.registry.LockRegistry.class);
            org.junit.jupiter.api.Assumptions.assumeTrue(registry.graceRemainingNanos() > 2_000_000_000L,
                    "the start took most of the grace: a machine too slow for this test");
            byte[] idle = "grace/idle".getBytes(UTF_8);
            byte[] busy = "grace/busy".getBytes(UTF_8);
            assertThat(observer.send(new Request.Observe(1, idle)).next())
                    .isEqualTo(new Answer.Event(1, 'G', 0, 0, 0, 0, 0, new byte[0]));
            assertThat(observer.send(new Request.Observe(2, busy)).next())
                    .isEqualTo(new Answer.Event(2, 'G', 0, 0, 0, 0, 0, new byte[0]));
            waiter.send(new Request.Acquire(30, 10, 1, busy));
            long token = ((Answer.Acquired) waiter.next(15_000)).token();
            java.util.List<Answer> ends = java.util.List.of(observer.next(15_000), observer.next(15_000));
            assertThat(ends).containsExactlyInAnyOrder(new Answer.Event(1, 'F', 6, 0, 0, 0, 0, new byte[0]),
                    new Answer.Event(2, 'H', 1, 0, token, 1, 0, new byte[0]));
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
