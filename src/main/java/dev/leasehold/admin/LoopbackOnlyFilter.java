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
 * The admin path's authentication (docs/security.md, "Changing members"): requests to the
 * {@code cluster} and {@code snapshot} endpoints (one filter each) are answered only when they come from a loopback address, that is
 * from inside the pod ({@code kubectl exec <pod> -- bin/leasehold cluster ...}, which Kubernetes
 * RBAC already guards). Anyone else gets 403 with the reason and changes nothing. The rest of
 * the management port (health, metrics) is not affected.
 */
public final class LoopbackOnlyFilter implements WebFilter {

    private final String path;

    /** @param path the endpoint's path, for example {@code /actuator/cluster} */
    public LoopbackOnlyFilter(String path) {
        this.path = path;
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
        byte[] body = ("{\"error\":\"" + path + " is answered only from the node itself (a loopback address), "
                + "not from " + (remote == null ? "an unknown address" : remote.getAddress() == null
                        ? remote.getHostString() : remote.getAddress().getHostAddress())
                + ": run leasehold cluster ... or leasehold admin ... inside the pod (kubectl exec); docs/security.md\"}")
                .getBytes(StandardCharsets.UTF_8);
        exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
        exchange.getResponse().getHeaders().setContentType(MediaType.APPLICATION_JSON);
        DataBuffer buffer = exchange.getResponse().bufferFactory().wrap(body);
        return exchange.getResponse().writeWith(Mono.just(buffer));
    }
}
