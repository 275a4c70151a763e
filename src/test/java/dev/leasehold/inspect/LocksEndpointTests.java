package dev.leasehold.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
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

    /**
     * PROTOCOL.md 17.2: the holder's value next to its token, as text when it is valid UTF-8, else as
     * hex, and {@code valueEncoding} says which; a grant without a value shows neither field.
     */
    @Test
    void theHoldersValueIsShownAsTextOrHexNextToItsToken() {
        java.util.concurrent.atomic.AtomicLong tokens = new java.util.concurrent.atomic.AtomicLong(100);
        LockRegistry r = new LockRegistry(new RegistryLimits(10, 10, 10, 10), NanoClock.SYSTEM, tokens::incrementAndGet,
                LeaseHorizon.UNBOUNDED, w -> { }, RegistryObserver.NONE);
        dev.leasehold.registry.SessionHandle s = new dev.leasehold.registry.SessionHandle();
        r.acquire("lead".getBytes(), dev.leasehold.protocol.HoldMode.EXCLUSIVE, 0, 30, 1, NanoClock.SYSTEM.nanoTime(), s,
                "n1 \"é\"\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        r.acquire("bin".getBytes(), dev.leasehold.protocol.HoldMode.EXCLUSIVE, 0, 30, 2, NanoClock.SYSTEM.nanoTime(), s,
                new byte[] {(byte) 0xFF, 0x0A, 0x00});
        r.acquire("plain".getBytes(), dev.leasehold.protocol.HoldMode.EXCLUSIVE, 0, 30, 3, NanoClock.SYSTEM.nanoTime(), s);
        LocksEndpoint endpoint = new LocksEndpoint(r, () -> LocksEndpoint.Serving.ALWAYS);
        try {
            Map<String, Object> text = endpoint.key(new String[] {"lead"}).block().getBody();
            assertThat(text).containsEntry("token", "101").containsEntry("value", "n1 \"é\"\n")
                    .containsEntry("valueEncoding", "utf-8");
            assertThat(List.copyOf(text.keySet())).as("next to the token")
                    .containsSubsequence("token", "value", "valueEncoding", "grantedAgoMs");
            Map<String, Object> hex = endpoint.key(new String[] {"bin"}).block().getBody();
            assertThat(hex).containsEntry("value", "ff0a00").containsEntry("valueEncoding", "hex");
            Map<String, Object> none = endpoint.key(new String[] {"plain"}).block().getBody();
            assertThat(none).containsKey("token").doesNotContainKeys("value", "valueEncoding");
        } finally {
            endpoint.destroy();
        }
    }
}
