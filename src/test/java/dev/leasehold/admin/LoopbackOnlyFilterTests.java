package dev.leasehold.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;

/** The admin path answers only from loopback; the rest of the management port is untouched. */
class LoopbackOnlyFilterTests {

    private final LoopbackOnlyFilter filter = new LoopbackOnlyFilter("/actuator/cluster");

    @Test
    void aChangeFromAnotherAddressIsRefusedWithTheReasonAndNeverReachesTheEndpoint() {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/actuator/cluster/add")
                .remoteAddress(new InetSocketAddress("10.1.2.3", 40000)).body("{\"id\":\"n9\"}"));
        AtomicBoolean reached = new AtomicBoolean();
        filter.filter(exchange, chain(reached)).block();
        assertThat(reached).isFalse();
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.FORBIDDEN);
        assertThat(exchange.getResponse().getBodyAsString().block()).contains("only from the node itself")
                .contains("10.1.2.3").contains("kubectl exec");
    }

    @Test
    void theMemberListIsGuardedToo() {
        MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/actuator/cluster")
                .remoteAddress(new InetSocketAddress("192.168.0.7", 1234)));
        AtomicBoolean reached = new AtomicBoolean();
        filter.filter(exchange, chain(reached)).block();
        assertThat(reached).isFalse();
        assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.FORBIDDEN);
    }

    @Test
    void loopbackCallersAndOtherEndpointsPass() {
        for (String address : new String[] {"127.0.0.1", "::1"}) {
            MockServerWebExchange local = MockServerWebExchange.from(MockServerHttpRequest.post("/actuator/cluster/remove")
                    .remoteAddress(new InetSocketAddress(address, 5555)).body("{}"));
            AtomicBoolean reached = new AtomicBoolean();
            filter.filter(local, chain(reached)).block();
            assertThat(reached).as(address).isTrue();
        }
        MockServerWebExchange health = MockServerWebExchange.from(MockServerHttpRequest.get("/actuator/health")
                .remoteAddress(new InetSocketAddress("10.1.2.3", 40000)));
        AtomicBoolean reached = new AtomicBoolean();
        filter.filter(health, chain(reached)).block();
        assertThat(reached).as("health from anywhere").isTrue();
        MockServerWebExchange lookalike = MockServerWebExchange.from(MockServerHttpRequest.get("/actuator/clusterx")
                .remoteAddress(new InetSocketAddress("10.1.2.3", 40000)));
        AtomicBoolean passed = new AtomicBoolean();
        filter.filter(lookalike, chain(passed)).block();
        assertThat(passed).as("another endpoint whose name starts alike").isTrue();
    }

    private static WebFilterChain chain(AtomicBoolean reached) {
        return exchange -> {
            reached.set(true);
            return Mono.empty();
        };
    }
}
