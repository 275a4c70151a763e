package dev.leasehold.admin;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import dev.leasehold.cluster.MemberView;
import dev.leasehold.cluster.Membership;
import dev.leasehold.cluster.MembershipException;
import reactor.core.publisher.Mono;

/**
 * The {@code cluster} Actuator endpoint (docs/cluster.md "Changing members"), what
 * {@code leasehold cluster ...} calls:
 * <ul>
 *   <li>{@code GET /actuator/cluster}: members, roles, commit indexes, last contact;</li>
 *   <li>{@code POST /actuator/cluster/add} {@code {"id", "raftAddress", "clientAddress"}} and, with
 *       cluster TLS, optionally {@code "identity"} (the SAN that names the new node);</li>
 *   <li>{@code POST /actuator/cluster/remove} {@code {"id"}};</li>
 *   <li>{@code POST /actuator/cluster/replace} {@code {"id", "newId", "raftAddress", "clientAddress"}}.</li>
 * </ul>
 * Not exposed unless {@code management.endpoints.web.exposure.include} names {@code cluster}, and
 * then answered only from loopback ({@link LoopbackOnlyFilter}; docs/security.md). Changes run one
 * at a time on this endpoint's own thread (they wait on Raft RPCs), never on an event loop; a
 * change asked while one runs gets 429. Statuses: 200 done, 400/409 refused (nothing changed),
 * 503 no leader, 504 a step timed out; the body's {@code error} says what happened and what to run.
 */
@Endpoint(id = ClusterEndpoint.ID)
public final class ClusterEndpoint implements DisposableBean {

    /** The endpoint id, and the last segment of its path. */
    public static final String ID = "cluster";

    private final Membership membership;
    private final ThreadPoolExecutor thread;

    public ClusterEndpoint(Membership membership) {
        this.membership = membership;
        this.thread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(1), r -> {
            Thread t = new Thread(r, "leasehold-cluster-admin");
            t.setDaemon(true);
            return t;
        });
    }

    /** The members as the leader sees them. */
    @ReadOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> members() {
        return run(() -> view(membership.members()));
    }

    /** One change: {@code add}, {@code remove} or {@code replace}. */
    @WriteOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> change(@Selector String action, String id,
            @Nullable String newId, @Nullable String raftAddress, @Nullable String clientAddress,
            @Nullable String identity) {
        Callable<Map<String, Object>> call = switch (action) {
            case "add" -> () -> result(membership.add(id, raftAddress, clientAddress, identity));
            case "remove" -> () -> result(membership.remove(id));
            case "replace" -> () -> result(membership.replace(id, newId, raftAddress, clientAddress, identity));
            default -> null;
        };
        if (call == null) {
            return Mono.just(error(400, "unknown change '" + action + "': add, remove or replace"));
        }
        return run(call);
    }

    private Mono<WebEndpointResponse<Map<String, Object>>> run(Callable<Map<String, Object>> call) {
        CompletableFuture<WebEndpointResponse<Map<String, Object>>> answer = new CompletableFuture<>();
        try {
            thread.execute(() -> {
                try {
                    answer.complete(new WebEndpointResponse<>(call.call(), 200));
                } catch (MembershipException e) {
                    answer.complete(error(status(e.kind()), e.getMessage()));
                } catch (Exception e) {
                    answer.complete(error(500, e.toString()));
                }
            });
        } catch (RejectedExecutionException e) {
            return Mono.just(error(429, "a membership change is running on this node; wait for it, then try again"));
        }
        return Mono.fromFuture(answer);
    }

    private static int status(MembershipException.Kind kind) {
        return switch (kind) {
            case REFUSED -> 400;
            case CONFLICT -> 409;
            case UNAVAILABLE -> 503;
            case TIMEOUT -> 504;
        };
    }

    private static WebEndpointResponse<Map<String, Object>> error(int status, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        return new WebEndpointResponse<>(body, status);
    }

    private static Map<String, Object> result(Membership.Result r) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("change", r.change());
        body.put("tookMs", r.millis());
        body.put("steps", r.steps());
        body.putAll(view(r.after()));
        return body;
    }

    private static Map<String, Object> view(MemberView v) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("leader", v.leader());
        body.put("term", v.term());
        body.put("commitIndex", v.commitIndex());
        List<Map<String, Object>> members = new ArrayList<>();
        for (MemberView.Member m : v.members()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("id", m.id());
            e.put("role", m.role().name());
            e.put("raftAddress", m.raftAddress());
            e.put("clientAddress", m.clientAddress());
            e.put("commitIndex", m.commitIndex());
            e.put("matchIndex", m.matchIndex());
            e.put("lastContactMs", m.lastContactMillis());
            members.add(e);
        }
        body.put("members", members);
        return body;
    }

    @Override
    public void destroy() {
        thread.shutdownNow();
    }
}
