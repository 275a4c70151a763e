package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.testing.TestServer;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * {@code client.check} and {@code Ticket.check} against the real server over sockets
 * (PROTOCOL.md section 11): Current for the active grant, NotCurrent after Release and after
 * expiry, Indeterminate when no server answers, and the outcome counters.
 */
class ClientCheckIntegrationTests {

    private static TestServer server;
    private static LeaseholdClient client;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of());
        client = LeaseholdClient.create(ClientOptions.builder().build(),
                List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port())));
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    @Test
    void currentWhileHeldNotCurrentAfterRelease() {
        Ticket t = ((AcquireOutcome.Acquired) client.acquire("check/release", 0, 30)).ticket();
        assertThat(t.check()).isInstanceOf(CheckOutcome.Current.class);
        assertThat(client.check("check/release", t.token())).isInstanceOf(CheckOutcome.Current.class);
        assertThat(client.check("check/release", t.token() + 1)).isInstanceOf(CheckOutcome.NotCurrent.class);
        assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(client.check("check/release", t.token())).isInstanceOf(CheckOutcome.NotCurrent.class);
        assertThat(t.check()).as("released locally: no request needed").isInstanceOf(CheckOutcome.NotCurrent.class);
    }

    @Test
    void notCurrentAfterTheLeaseExpires() throws Exception {
        Ticket t = ((AcquireOutcome.Acquired) client.acquire("check/expiry", 0, 1)).ticket();
        assertThat(client.check("check/expiry", t.token())).isInstanceOf(CheckOutcome.Current.class);
        Thread.sleep(1200); // real time: the server's 1 s lease must run out on its own clock
        assertThat(client.check("check/expiry", t.token())).isInstanceOf(CheckOutcome.NotCurrent.class);
    }

    @Test
    void checksAreCountedByOutcome() {
        MeterRegistry meters = server.bean(MeterRegistry.class);
        double current = meters.counter("leasehold.checks", "outcome", "current").count();
        double notCurrent = meters.counter("leasehold.checks", "outcome", "not_current").count();
        Ticket t = ((AcquireOutcome.Acquired) client.acquire("check/metrics", 0, 30)).ticket();
        client.check("check/metrics", t.token());
        client.check("check/metrics", t.token() - 1);
        t.release();
        assertThat(meters.counter("leasehold.checks", "outcome", "current").count()).isEqualTo(current + 1);
        assertThat(meters.counter("leasehold.checks", "outcome", "not_current").count()).isEqualTo(notCurrent + 1);
    }

    @Test
    void indeterminateWhenNoServerAnswers() throws Exception {
        int unused;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            unused = s.getLocalPort();
        }
        try (LeaseholdClient nowhere = LeaseholdClient.create(ClientOptions.builder().build(),
                List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), unused)))) {
            assertThat(nowhere.check("check/nowhere", 1, Duration.ofMillis(300))).isInstanceOf(
                    CheckOutcome.Indeterminate.class);
        }
    }
}
