package dev.leasehold.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.BusyReason;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.Actuator.Scrape;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Drives the protocol over real sockets and scrapes {@code /actuator/prometheus} over HTTP, as
 * Prometheus does: each metric of docs/metrics.md's table moves by exactly what was done. Tests share
 * one server and compare scrapes before and after, each on its own keys.
 */
class MetricsIntegrationTests {

    private static final Duration AWAIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass(
            Map.of("leasehold.max-waiters-per-key", "1", "leasehold.token-block-size", "100"));
    private static Actuator actuator;

    @BeforeAll
    static void actuator() {
        actuator = new Actuator(server.httpPort());
    }

    @Test
    void everyMetricOfTheTableIsExportedWithItsTypeAndHelpAtZero() {
        Scrape s = actuator.scrape();
        Map<String, String> expected = Map.ofEntries(
                Map.entry("leasehold_locks_held", "gauge"),
                Map.entry("leasehold_locks_delayed", "gauge"),
                Map.entry("leasehold_checks_total", "counter"),
                Map.entry("leasehold_waiters", "gauge"),
                Map.entry("leasehold_waiters_max_per_key", "gauge"),
                Map.entry("leasehold_sessions", "gauge"),
                Map.entry("leasehold_acquires_total", "counter"),
                Map.entry("leasehold_busy_total", "counter"),
                Map.entry("leasehold_lease_expirations_total", "counter"),
                Map.entry("leasehold_queue_wait_seconds", "histogram"),
                Map.entry("leasehold_hold_seconds", "histogram"),
                Map.entry("leasehold_handoff_seconds", "histogram"),
                Map.entry("leasehold_releases_total", "counter"),
                Map.entry("leasehold_extends_total", "counter"),
                Map.entry("leasehold_protocol_errors_total", "counter"),
                Map.entry("leasehold_token_store_writes_total", "counter"),
                Map.entry("leasehold_token_high_water", "gauge"),
                Map.entry("leasehold_storage_failing", "gauge"));
        expected.forEach((name, type) -> {
            assertThat(s.types()).as(name).containsEntry(name, type);
            assertThat(s.help().get(name)).as("HELP of " + name).isNotBlank();
        });
        for (String outcome : new String[] {"acquired", "timeout", "busy"}) {
            assertThat(s.has("leasehold_acquires_total", "outcome", outcome)).as(outcome).isTrue();
        }
        for (BusyReason reason : BusyReason.values()) {
            assertThat(s.has("leasehold_busy_total", "reason", reason.tag())).as(reason.tag()).isTrue();
        }
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(s.has("leasehold_protocol_errors_total", "code", Integer.toString(code.code()))).isTrue();
        }
        for (String end : new String[] {"released", "expired"}) {
            assertThat(s.has("leasehold_hold_seconds_count", "end", end)).as(end).isTrue();
        }
        assertThat(s.has("leasehold_releases_total", "outcome", "not_held")).isTrue();
        assertThat(s.has("leasehold_extends_total", "outcome", "not_held")).isTrue();
        assertThat(s.has("leasehold_checks_total", "outcome", "current")).isTrue();
        assertThat(s.has("leasehold_checks_total", "outcome", "not_current")).isTrue();
        assertThat(s.value("leasehold_storage_failing")).isZero();
        assertThat(s.value("leasehold_token_store_writes_total")).as("the reservation at start").isGreaterThanOrEqualTo(1);
        assertThat(s.value("leasehold_token_high_water")).as("the first block, reserved at start").isGreaterThanOrEqualTo(1);
        assertThat(s.samples().keySet()).as("no per-key labels").noneMatch(series -> series.contains("key=\""));
    }

    @Test
    void grantTimeoutReleaseAndNotHeld() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient a = new RawClient(server.port()); RawClient b = new RawClient(server.port())) {
            long token = ((Answer.Acquired) a.send(acquire("m/grant", 0, 30, 1)).next()).token();
            assertThat(actuator.scrape().value("leasehold_locks_held") - before.value("leasehold_locks_held")).isEqualTo(1);

            assertThat(b.send(acquire("m/grant", 0, 30, 2)).next()).isEqualTo(new Answer.TimedOut(2));
            assertThat(a.send(new Request.Release(token, key("m/grant"))).next()).isEqualTo(new Answer.Released(token));
            assertThat(a.send(new Request.Release(token, key("m/grant"))).next()).isEqualTo(new Answer.NotHeld(token));
            assertThat(b.send(new Request.Release(99, key("m/never"))).next()).isEqualTo(new Answer.NotHeld(99));
        }
        Scrape after = actuator.scrape();
        assertThat(delta(before, after, "leasehold_acquires_total", "outcome", "acquired")).isEqualTo(1);
        assertThat(delta(before, after, "leasehold_acquires_total", "outcome", "timeout")).isEqualTo(1);
        assertThat(delta(before, after, "leasehold_acquires_total", "outcome", "busy")).isZero();
        assertThat(delta(before, after, "leasehold_releases_total", "outcome", "released")).isEqualTo(1);
        assertThat(delta(before, after, "leasehold_releases_total", "outcome", "not_held")).isEqualTo(2);
        assertThat(delta(before, after, "leasehold_hold_seconds_count", "end", "released")).isEqualTo(1);
        assertThat(delta(before, after, "leasehold_queue_wait_seconds_count")).as("nothing queued").isZero();
        assertThat(delta(before, after, "leasehold_handoff_seconds_count")).as("no Release handed a key on").isZero();
        assertThat(delta(before, after, "leasehold_locks_held")).isZero();
    }

    @Test
    void queueDepthBusyAtTheKeyLimitAndQueueWait() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port());
                RawClient third = new RawClient(server.port())) {
            long token = ((Answer.Acquired) holder.send(acquire("m/queue", 0, 30, 1)).next()).token();
            waiter.send(acquire("m/queue", 30, 30, 2));
            Wait.untilAsserted("one waiter on m/queue in the scrape", AWAIT, () -> {
                Scrape s = actuator.scrape();
                assertThat(delta(before, s, "leasehold_waiters")).isEqualTo(1);
                assertThat(s.value("leasehold_waiters_max_per_key")).isEqualTo(1);
            });

            // max-waiters-per-key is 1: the next waiter is refused with B
            assertThat(third.send(acquire("m/queue", 30, 30, 3)).next()).isEqualTo(new Answer.Busy(3));
            Thread.sleep(50); // a measurable queue wait
            holder.send(new Request.Release(token, key("m/queue")));
            Answer.Acquired granted = (Answer.Acquired) waiter.next();
            assertThat(holder.next()).isEqualTo(new Answer.Released(token));

            Scrape after = actuator.scrape();
            assertThat(delta(before, after, "leasehold_busy_total", "reason", "key_queue")).isEqualTo(1);
            assertThat(delta(before, after, "leasehold_acquires_total", "outcome", "busy")).isEqualTo(1);
            assertThat(delta(before, after, "leasehold_acquires_total", "outcome", "acquired")).isEqualTo(2);
            assertThat(delta(before, after, "leasehold_queue_wait_seconds_count")).isEqualTo(1);
            assertThat(delta(before, after, "leasehold_queue_wait_seconds_sum"))
                    .as("receipt to grant, as queued_ms says").isCloseTo(granted.queuedMs() / 1000.0, within(0.002));
            assertThat(delta(before, after, "leasehold_waiters")).isZero();
            assertThat(after.value("leasehold_waiters_max_per_key")).isZero();
            waiter.send(new Request.Release(granted.token(), key("m/queue"))).next();
        }
        // Timed on the waiter's event loop just after the flush that carried the A: the client can
        // read the A a moment before the sample is recorded, hence the await.
        Wait.untilAsserted("the hand-off counted in the scrape", AWAIT, () ->
                assertThat(delta(before, actuator.scrape(), "leasehold_handoff_seconds_count")).isEqualTo(1));
        Scrape after = actuator.scrape();
        assertThat(delta(before, after, "leasehold_handoff_seconds_sum"))
                .as("Release read → A flushed: far less than the 50 ms the waiter queued").isPositive().isLessThan(0.045);
    }

    @Test
    void aHandOffWithinOneSessionIsTimedWhenItsBatchIsFlushed() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient c = new RawClient(server.port())) {
            long token = ((Answer.Acquired) c.send(acquire("m/handoff", 0, 30, 1)).next()).token();
            c.send(acquire("m/handoff", 30, 30, 2));
            Wait.untilAsserted("the session's own waiter on m/handoff in the scrape", AWAIT,
                    () -> assertThat(delta(before, actuator.scrape(), "leasehold_waiters")).isEqualTo(1));
            // The Release grants the session's own waiter: its A joins the read batch (appended while
            // the Release is decided, so before the R) and both leave in one flush.
            c.send(new Request.Release(token, key("m/handoff")));
            Answer.Acquired granted = (Answer.Acquired) c.next();
            assertThat(granted.owner()).isEqualTo(2);
            assertThat(c.next()).isEqualTo(new Answer.Released(token));
            Wait.untilAsserted("the hand-off within the session counted in the scrape", AWAIT, () ->
                    assertThat(delta(before, actuator.scrape(), "leasehold_handoff_seconds_count")).isEqualTo(1));
            c.send(new Request.Release(granted.token(), key("m/handoff"))).next();
        }
        assertThat(delta(before, actuator.scrape(), "leasehold_handoff_seconds_count"))
                .as("the last Release had no waiter to hand the key to").isEqualTo(1);
    }

    @Test
    void extendAndNotHeld() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient c = new RawClient(server.port())) {
            long token = ((Answer.Acquired) c.send(acquire("m/extend", 0, 30, 1)).next()).token();
            assertThat(c.send(new Request.Extend(60, token, key("m/extend"))).next()).isEqualTo(new Answer.Extended(token));
            assertThat(c.send(new Request.Extend(90, token, key("m/extend"))).next()).isEqualTo(new Answer.Extended(token));
            assertThat(c.send(new Request.Extend(60, token + 1000, key("m/extend"))).next())
                    .isEqualTo(new Answer.NotHeld(token + 1000));
            c.send(new Request.Release(token, key("m/extend"))).next();
        }
        Scrape after = actuator.scrape();
        assertThat(delta(before, after, "leasehold_extends_total", "outcome", "extended")).isEqualTo(2);
        assertThat(delta(before, after, "leasehold_extends_total", "outcome", "not_held")).isEqualTo(1);
    }

    @Test
    void aLeaseThatRunsOutIsCountedAsExpiration() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient c = new RawClient(server.port())) {
            assertThat(c.send(acquire("m/expire", 0, 1, 1)).next()).isInstanceOf(Answer.Acquired.class);
        }
        Wait.untilAsserted("the 1 s lease on m/expire counted as expired in the scrape", AWAIT, () -> {
            Scrape s = actuator.scrape();
            assertThat(delta(before, s, "leasehold_lease_expirations_total")).isEqualTo(1);
            assertThat(delta(before, s, "leasehold_hold_seconds_count", "end", "expired")).isEqualTo(1);
            // grant to lease end: the whole 1 s lease
            assertThat(delta(before, s, "leasehold_hold_seconds_sum", "end", "expired")).isCloseTo(1.0, within(0.001));
            assertThat(delta(before, s, "leasehold_locks_held")).isZero();
        });
        assertThat(delta(before, actuator.scrape(), "leasehold_hold_seconds_count", "end", "released")).isZero();
    }

    @Test
    void anXFrameIsCountedByItsCode() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient c = new RawClient(server.port())) {
            Answer a = c.sendHex("5A 0A").next(); // op 'Z' does not exist
            assertThat(a).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) a).code()).isEqualTo(ErrorCode.UNKNOWN_OP.code());
        }
        Wait.untilAsserted("the X 1 counted in the scrape", AWAIT, () -> {
            Scrape s = actuator.scrape();
            assertThat(delta(before, s, "leasehold_protocol_errors_total", "code", "1")).isEqualTo(1);
            assertThat(delta(before, s, "leasehold_protocol_errors_total", "code", "2")).isZero();
        });
    }

    @Test
    void sessionsGaugeFollowsOpenSessions() throws Exception {
        Wait.until("no session open on the server (leasehold_sessions, scraped)", AWAIT,
                () -> actuator.scrape().value("leasehold_sessions"), v -> v == 0);
        try (RawClient a = new RawClient(server.port()); RawClient b = new RawClient(server.port())) {
            a.send(new Request.Ping(1)).next();
            b.send(new Request.Ping(2)).next();
            Wait.untilAsserted("two sessions in the scrape", AWAIT,
                    () -> assertThat(actuator.scrape().value("leasehold_sessions")).isEqualTo(2));
        }
        Wait.untilAsserted("no session in the scrape after both closed", AWAIT,
                () -> assertThat(actuator.scrape().value("leasehold_sessions")).isZero());
    }

    @Test
    void tokenStoreWritesFollowTheBlocksUsed() throws Exception {
        Scrape before = actuator.scrape();
        try (RawClient c = new RawClient(server.port())) {
            for (int i = 0; i < 60; i++) { // token-block-size 100: a write at least every 50 tokens
                Answer a = c.send(acquire("m/tokens", 0, 30, i)).next();
                assertThat(a).isInstanceOf(Answer.Acquired.class);
                c.send(new Request.Release(((Answer.Acquired) a).token(), key("m/tokens"))).next();
            }
        }
        Wait.untilAsserted("a token store write counted in the scrape", AWAIT, () ->
                assertThat(delta(before, actuator.scrape(), "leasehold_token_store_writes_total")).isGreaterThanOrEqualTo(1));
    }

    private static double delta(Scrape before, Scrape after, String name, String... labels) {
        return after.value(name, labels) - before.value(name, labels);
    }

    static Request.Acquire acquire(String key, int wait, int lease, long owner) {
        return new Request.Acquire(wait, lease, owner, key(key));
    }

    static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }
}
