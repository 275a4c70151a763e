package dev.leasehold.admin;

import java.util.function.Supplier;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import dev.leasehold.protocol.TokenFloorSnapshot;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The {@code snapshot} Actuator endpoint (docs/cluster.md "Backup and restore of the token floor"),
 * what {@code leasehold admin snapshot save FILE} calls: {@code GET /actuator/snapshot} answers a
 * token-floor snapshot ({@link TokenFloorSnapshot}: versioned, checksummed text) of this node, or,
 * in a cluster, 503 with the reason unless this node is the serving leader (only its committed
 * state and the tokens it issued bound every token the cluster issued). Not exposed unless
 * {@code management.endpoints.web.exposure.include} names {@code snapshot}, and then answered only
 * from loopback, like the {@code cluster} endpoint ({@link LoopbackOnlyFilter}).
 */
@Endpoint(id = SnapshotEndpoint.ID)
public final class SnapshotEndpoint {

    /** The endpoint id, and the last segment of its path. */
    public static final String ID = "snapshot";

    private final Supplier<TokenFloorSnapshot> take;

    /**
     * @param take takes a snapshot now; throws {@link IllegalStateException} saying why when this
     *        node cannot (in a cluster: not the serving leader)
     */
    public SnapshotEndpoint(Supplier<TokenFloorSnapshot> take) {
        this.take = take;
    }

    /** A snapshot of this node's token floor, as the file's text. */
    @ReadOperation(produces = "text/plain")
    public Mono<WebEndpointResponse<String>> snapshot() {
        // Off the event loop: the cluster's table is read under its lock, which a Raft snapshot holds across I/O.
        return Mono.fromCallable(() -> {
            try {
                return new WebEndpointResponse<>(take.get().encode(), 200);
            } catch (IllegalStateException e) {
                return new WebEndpointResponse<>("error: " + e.getMessage() + "\n", 503);
            }
        }).subscribeOn(Schedulers.boundedElastic());
    }
}
