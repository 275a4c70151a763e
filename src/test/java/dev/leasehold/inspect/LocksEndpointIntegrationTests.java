package dev.leasehold.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/**
 * The {@code locks} endpoint on the real server, exposed with the one line docs/operations.md
 * gives: a key's holder, lease and waiters as they change over real sockets, {@code top}, bad
 * arguments; and, on a server with the default settings, that it answers loopback callers only.
 */
class LocksEndpointIntegrationTests {

    private static TestServer server;
    private static Actuator actuator;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("management.endpoints.web.exposure.include", "health,info,prometheus,locks"));
        actuator = new Actuator(server.httpPort());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void showsTheHolderAndTheWaitersOfAKeyAsTheyChange() throws Exception {
        Actuator.Response free = actuator.get("/actuator/locks/orders/42");
        assertThat(free.status()).isEqualTo(200);
        assertThat((String) free.json("$.state")).isEqualTo("free");
        assertThat((Boolean) free.json("$.serving")).isTrue();

        byte[] key = Request.key("orders/42");
        try (RawClient holder = new RawClient(server.port()); RawClient waiter = new RawClient(server.port())) {
            holder.send(new Request.Acquire(0, 30, 1, key));
            long token = ((Answer.Acquired) holder.next()).token();
            Actuator.Response held = actuator.get("/actuator/locks/orders/42");
            System.out.println("inspect orders/42 (held): " + held.body());
            assertThat((String) held.json("$.state")).isEqualTo("held");
            assertThat((String) held.json("$.token")).isEqualTo(Long.toString(token));
            assertThat((Integer) held.json("$.leaseRemainingMs")).isBetween(25_000, 30_000);
            assertThat((Integer) held.json("$.longestLeaseSeconds")).isEqualTo(30);
            assertThat((String) held.json("$.holder.address"))
                    .isEqualTo("127.0.0.1:" + holder.socket().getLocalPort());

            waiter.send(new Request.Acquire(20, 10, 2, key));
            assertThat(waiter.poll(100)).isNull();
            Actuator.Response queued = actuator.get("/actuator/locks/orders/42");
            System.out.println("inspect orders/42 (queued): " + queued.body());
            assertThat((String) queued.json("$.state")).isEqualTo("queued");
            assertThat((Integer) queued.json("$.waiters.count")).isEqualTo(1);
            List<Integer> waits = queued.json("$.waiters.oldestRemainingMs");
            assertThat(waits).singleElement().satisfies(w -> assertThat(w).isBetween(15_000, 20_000));

            Actuator.Response top = actuator.get("/actuator/locks?top=5");
            System.out.println("top: " + top.body());
            assertThat((String) top.json("$.longestQueues[0].key")).isEqualTo("orders/42");
            assertThat((String) top.json("$.heldLongest[0].key")).isEqualTo("orders/42");

            holder.send(new Request.Release(token, key));
            assertThat(holder.next()).isEqualTo(new Answer.Released(token));
            assertThat(waiter.next()).isInstanceOf(Answer.Acquired.class);
            Actuator.Response handedOver = actuator.get("/actuator/locks/orders/42");
            assertThat((String) handedOver.json("$.state")).isEqualTo("held");
            assertThat((String) handedOver.json("$.holder.address"))
                    .isEqualTo("127.0.0.1:" + waiter.socket().getLocalPort());
        }
    }

    @Test
    void badArgumentsAre400() {
        assertThat(actuator.get("/actuator/locks?top=0").status()).isEqualTo(400);
        assertThat(actuator.get("/actuator/locks?top=101").status()).isEqualTo(400);
        assertThat(actuator.get("/actuator/locks").status()).as("top defaults to 10").isEqualTo(200);
    }

    /**
     * A server with the default settings (management port on 127.0.0.1) exposes the endpoint, so
     * {@code leasehold inspect} works for a new user; bound to every address, that default still
     * answers only the node itself: a caller from another of this machine's addresses gets 403
     * with the reason, health does not. An operator who names the exposure list decides alone.
     */
    @Test
    void exposedByDefaultToLoopbackCallersOnly() throws Exception {
        try (TestServer plain = TestServer.start(Map.of())) {
            Actuator.Response local = new Actuator(plain.httpPort()).get("/actuator/locks/orders/42");
            assertThat(local.status()).as(local.body()).isEqualTo(200);
            assertThat((String) local.json("$.state")).isEqualTo("free");
        }
        Optional<String> outside = nonLoopbackAddress();
        Assumptions.assumeTrue(outside.isPresent(), "this machine has no non-loopback IPv4 address to call from");
        try (TestServer everywhere = TestServer.start(Map.of("server.address", "0.0.0.0"))) {
            Actuator remote = new Actuator(outside.get(), everywhere.httpPort());
            Actuator.Response refused = remote.get("/actuator/locks/orders/42");
            assertThat(refused.status()).as(refused.body()).isEqualTo(403);
            assertThat(refused.body()).contains("only from the node itself").contains(outside.get())
                    .contains("management.endpoints.web.exposure.include");
            assertThat(remote.get("/actuator/locks").status()).as("top too").isEqualTo(403);
            assertThat(remote.get("/actuator/health").status()).as("health is not guarded").isEqualTo(200);
            assertThat(new Actuator(everywhere.httpPort()).get("/actuator/locks/orders/42").status())
                    .as("from the node itself").isEqualTo(200);
        }
        try (TestServer chosen = TestServer.start(Map.of("server.address", "0.0.0.0",
                "management.endpoints.web.exposure.include", "health,locks"))) {
            Actuator.Response read = new Actuator(outside.get(), chosen.httpPort()).get("/actuator/locks/orders/42");
            assertThat(read.status()).as("exposed by the operator: " + read.body()).isEqualTo(200);
        }
    }

    private static Optional<String> nonLoopbackAddress() throws Exception {
        for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!ni.isUp() || ni.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(ni.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    return Optional.of(a.getHostAddress());
                }
            }
        }
        return Optional.empty();
    }
}
