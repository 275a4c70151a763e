package dev.leasehold.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
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
 * arguments; and, on a server with the default settings, that it is not exposed at all.
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

    @Test
    void notExposedByDefault() {
        try (TestServer plain = TestServer.start(Map.of())) {
            assertThat(new Actuator(plain.httpPort()).get("/actuator/locks/orders/42").status()).isEqualTo(404);
        }
    }
}
