package dev.leasehold.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;

/**
 * The endpoint without a server: a node that does not serve (a cluster follower) answers 200
 * with {@code serving: false} and the leader's protocol address, and reads nothing.
 */
class LocksEndpointTests {

    private final LockRegistry registry = new LockRegistry(new RegistryLimits(10, 10, 10, 10), NanoClock.SYSTEM,
            () -> 1, LeaseHorizon.UNBOUNDED, w -> { }, RegistryObserver.NONE);

    @Test
    void aNodeThatDoesNotServeNamesTheLeader() {
        LocksEndpoint endpoint = new LocksEndpoint(registry, () -> new LocksEndpoint.Serving(false, "10.0.0.1:7420"));
        try {
            WebEndpointResponse<Map<String, Object>> key = endpoint.key(new String[] {"orders", "42"}).block();
            assertThat(key.getStatus()).isEqualTo(200);
            assertThat(key.getBody()).containsEntry("serving", false).containsEntry("leader", "10.0.0.1:7420")
                    .doesNotContainKey("state");
            WebEndpointResponse<Map<String, Object>> top = endpoint.top(5).block();
            assertThat(top.getBody()).containsEntry("serving", false).doesNotContainKey("longestQueues");
        } finally {
            endpoint.destroy();
        }
    }

    @Test
    void aServingNodeJoinsTheKeysSegments() {
        LocksEndpoint endpoint = new LocksEndpoint(registry, () -> LocksEndpoint.Serving.ALWAYS);
        try {
            Map<String, Object> body = endpoint.key(new String[] {"orders", "42"}).block().getBody();
            assertThat(body).containsEntry("serving", true).containsEntry("key", "orders/42")
                    .containsEntry("state", "free");
        } finally {
            endpoint.destroy();
        }
    }
}
