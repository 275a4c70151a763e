package dev.leasehold.admin;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;

/**
 * Answers requests to one management path only when they come from a loopback address, that is
 * from the node itself (or, in Kubernetes, from inside the pod: {@code kubectl exec <pod> --
 * bin/leasehold ...}, which Kubernetes RBAC already guards). Anyone else gets 403 with the reason
 * and reaches nothing. Used for the {@code cluster} and {@code snapshot} endpoints always
 * (docs/security.md, "Changing members") and for the {@code locks} endpoint while it is exposed by the shipped default only
 * (docs/security.md, "The locks endpoint"). The rest of the management port (health, metrics)
 * is not affected.
 */
public final class LoopbackOnlyFilter implements WebFilter {

    private final String path;
    private final String refusal;
    private final String advice;

    /**
     * An admin path's guard ({@code cluster}, {@code snapshot}): the refusal names the path and
     * says to run the command inside the pod.
     *
     * @param path the endpoint's path, for example {@code /actuator/cluster}
     */
    public LoopbackOnlyFilter(String path) {
        this(path, path + " is answered", "run leasehold cluster ... or leasehold admin ... inside the pod (kubectl exec);"
                + " docs/security.md");
    }

    /**
     * @param path the endpoint's path, for example {@code /actuator/locks}
     * @param refusal what a refused caller is told, before "not from ADDRESS" and the advice
     * @param advice what to do instead, after the caller's address
     */
    public LoopbackOnlyFilter(String path, String refusal, String advice) {
        this.path = path;
        this.refusal = refusal + " only from the node itself (a loopback address), not from ";
        this.advice = advice;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String p = exchange.getRequest().getPath().pathWithinApplication().value();
        if (!p.equals(path) && !p.startsWith(path + "/")) {
            return chain.filter(exchange);
        }
        InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
        if (remote != null && remote.getAddress() != null && remote.getAddress().isLoopbackAddress()) {
            return chain.filter(exchange);
        }
        String from = remote == null ? "an unknown address"
                : remote.getAddress() == null ? remote.getHostString() : remote.getAddress().getHostAddress();
        byte[] body = ("{\"error\":\"" + refusal + from + ": " + advice + "\"}").getBytes(StandardCharsets.UTF_8);
        exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
        exchange.getResponse().getHeaders().setContentType(MediaType.APPLICATION_JSON);
        DataBuffer buffer = exchange.getResponse().bufferFactory().wrap(body);
        return exchange.getResponse().writeWith(Mono.just(buffer));
    }
}
