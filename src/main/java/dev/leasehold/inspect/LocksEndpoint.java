package dev.leasehold.inspect;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import dev.leasehold.protocol.Keys;
import dev.leasehold.registry.KeyView;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.SessionHandle;
import dev.leasehold.registry.TopKeys;
import reactor.core.publisher.Mono;

/**
 * {@code GET /actuator/locks/{key}} (one key: state, token, lease, holder, waiters) and
 * {@code GET /actuator/locks?top=N} (the N longest queues and the N oldest grants). Not exposed
 * unless {@code management.endpoints.web.exposure.include} names {@code locks}
 * (docs/security.md says why).
 *
 * <h2>Threading and cost</h2>
 * Every answer is computed on this endpoint's one thread ({@code leasehold-inspect}), never on
 * an HTTP or protocol event loop, and handed back as a {@link Mono}. A key costs one lane lock
 * for a few field reads. {@code top} walks every key, lane by lane in chunks of
 * {@value #CHUNK} table slots per lock hold ({@link LockRegistry#top}), so grants on a lane
 * wait for one chunk at most; at most {@value #QUEUE} requests wait for the thread, more get
 * 429. N is capped at {@value #MAX_TOP}.
 *
 * <h2>Cluster mode</h2>
 * Only the serving leader has the lock state. Another node answers 200 with
 * {@code "serving": false} and {@code "leader": "host:port"} (the leader's protocol address,
 * as in {@code X 8}; empty while none is known) and no key data, rather than a redirect: the
 * leader's management port is not known to the cluster, only its protocol address.
 */
@Endpoint(id = "locks")
public final class LocksEndpoint implements DisposableBean {

    /** Table slots scanned per lane-lock hold by {@code top}: about 10-50 µs of lock time. */
    static final int CHUNK = 1024;
    static final int MAX_TOP = 100;
    static final int DEFAULT_TOP = 10;
    /** Oldest waiters whose remaining waits are shown. */
    static final int WAITS_SHOWN = 5;
    private static final int QUEUE = 4;

    /**
     * Whether this node serves locks now, and the leader's protocol address otherwise.
     *
     * @param serving true on a single node and on the serving cluster leader
     * @param leader the leader's {@code host:port}, or empty while none is known (ignored when serving)
     */
    public record Serving(boolean serving, String leader) {

        /** A single node always serves. */
        public static final Serving ALWAYS = new Serving(true, "");
    }

    private final LockRegistry registry;
    private final Supplier<Serving> serving;
    private final ThreadPoolExecutor thread;

    public LocksEndpoint(LockRegistry registry, Supplier<Serving> serving) {
        this.registry = registry;
        this.serving = serving;
        this.thread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(QUEUE), r -> {
            Thread t = new Thread(r, "leasehold-inspect");
            t.setDaemon(true);
            return t;
        });
    }

    /** {@code GET /actuator/locks?top=N}: the N keys with the longest queues and the N held longest. */
    @ReadOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> top(@Nullable Integer top) {
        int n = top == null ? DEFAULT_TOP : top;
        if (n < 1 || n > MAX_TOP) {
            return Mono.just(new WebEndpointResponse<>(Map.of("error", "top must be 1.." + MAX_TOP + ", not " + n),
                    WebEndpointResponse.STATUS_BAD_REQUEST));
        }
        return on(s -> {
            TopKeys t = registry.top(n, CHUNK, WAITS_SHOWN, new Pacer());
            s.put("top", n);
            s.put("scannedKeys", t.scannedKeys());
            s.put("tookMs", TimeUnit.NANOSECONDS.toMillis(t.tookNanos()));
            s.put("longestQueues", views(t.longestQueues()));
            s.put("heldLongest", views(t.heldLongest()));
        });
    }

    /** {@code GET /actuator/locks/{key}}; a key with {@code /} in it is given as more path segments. */
    @ReadOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> key(@Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
        byte[] bytes = String.join("/", key).getBytes(StandardCharsets.UTF_8);
        String problem = Keys.problem(bytes, Integer.MAX_VALUE);
        if (problem != null) {
            return Mono.just(new WebEndpointResponse<>(Map.of("error", problem), WebEndpointResponse.STATUS_BAD_REQUEST));
        }
        return on(s -> s.putAll(view(registry.inspect(bytes, WAITS_SHOWN))));
    }

    /** Runs {@code fill} on the inspect thread when this node serves; the serving fields first. */
    private Mono<WebEndpointResponse<Map<String, Object>>> on(Consumer<Map<String, Object>> fill) {
        Serving now = serving.get();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("serving", now.serving());
        if (!now.serving()) {
            body.put("leader", now.leader());
            return Mono.just(new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK));
        }
        CompletableFuture<WebEndpointResponse<Map<String, Object>>> f;
        try {
            f = CompletableFuture.supplyAsync(() -> {
                fill.accept(body);
                return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK);
            }, thread);
        } catch (RejectedExecutionException e) {
            return Mono.just(new WebEndpointResponse<>(Map.of("error", "inspect is busy: try again"),
                    WebEndpointResponse.STATUS_TOO_MANY_REQUESTS));
        }
        return Mono.fromFuture(f);
    }

    /**
     * Keeps the walk to about a fifth of one core: after each millisecond of scanning it sleeps
     * four. On a small machine the walk otherwise competes with the event loops for CPU and moves
     * the grants' tail latency (measured: docs/operations.md); a top then takes about five times
     * as long, under a second for a million held keys.
     */
    static final class Pacer implements Runnable {
        private static final long WORK_NANOS = 1_000_000;
        private static final long REST_NANOS = 4_000_000;
        private long sliceStart = System.nanoTime();

        @Override
        public void run() {
            long now = System.nanoTime();
            if (now - sliceStart >= WORK_NANOS) {
                LockSupport.parkNanos(REST_NANOS);
                sliceStart = System.nanoTime();
            }
        }
    }

    static List<Map<String, Object>> views(List<KeyView> views) {
        List<Map<String, Object>> out = new ArrayList<>(views.size());
        for (KeyView v : views) {
            out.add(view(v));
        }
        return out;
    }

    /** One key as JSON: durations in milliseconds, rounded down; fields that do not apply left out. */
    static Map<String, Object> view(KeyView v) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", v.key());
        m.put("state", v.state().label());
        if (v.token() != 0) {
            m.put("token", Long.toUnsignedString(v.token()));
            putValue(m, v.value());
            m.put("grantedAgoMs", ms(v.grantedAgoNanos()));
            m.put("leaseRemainingMs", ms(v.leaseRemainingNanos()));
            m.put("longestLeaseSeconds", v.longestLeaseSeconds());
            m.put("holder", holder(v.holder()));
        }
        if (v.delayedToken() != 0) {
            m.put("delayedToken", Long.toUnsignedString(v.delayedToken()));
            m.put("delayRemainingMs", ms(v.delayRemainingNanos()));
        }
        boolean exclusive = v.token() != 0 || v.delayedToken() != 0;
        if (exclusive) {
            m.put("mode", "exclusive");
        } else if (!v.sharedHolders().isEmpty() || v.delayedSharedSlots() > 0) {
            m.put("mode", "shared");
        }
        if (v.sharedMode() != null) {
            // PROTOCOL.md section 13.8: the shared limit (fixed by shared holders or shared waiters) and every holder
            m.put("limit", v.sharedMode().limit());
            List<Map<String, Object>> holders = new ArrayList<>(v.sharedHolders().size());
            for (KeyView.SharedHolder g : v.sharedHolders()) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("token", Long.toUnsignedString(g.token()));
                one.put("grantedAgoMs", ms(g.grantedAgoNanos()));
                one.put("leaseRemainingMs", ms(g.leaseRemainingNanos()));
                one.put("longestLeaseSeconds", g.longestLeaseSeconds());
                one.put("holder", holder(g.holder()));
                holders.add(one);
            }
            m.put("sharedHolders", holders);
            if (v.delayedSharedSlots() > 0) {
                m.put("delayedSharedSlots", v.delayedSharedSlots());
            }
        }
        Map<String, Object> waiters = new LinkedHashMap<>();
        waiters.put("count", v.waiters());
        List<Long> waits = new ArrayList<>(v.oldestWaitsRemainingNanos().size());
        for (long w : v.oldestWaitsRemainingNanos()) {
            waits.add(ms(w));
        }
        waiters.put("oldestRemainingMs", waits);
        waiters.put("oldestKinds", v.oldestWaiterKinds());
        m.put("waiters", waiters);
        return m;
    }

    /**
     * The holder's value next to its token (PROTOCOL.md 17.2 rule 3): {@code value} as text when it
     * is valid UTF-8 ({@code valueEncoding} {@code utf-8}; JSON escapes it), else as lower-case hex
     * ({@code valueEncoding} {@code hex}). Left out when the grant has none.
     */
    private static void putValue(Map<String, Object> m, byte[] value) {
        if (value == null) {
            return;
        }
        boolean text = dev.leasehold.protocol.Utf8.isValid(value);
        m.put("value", text ? new String(value, java.nio.charset.StandardCharsets.UTF_8)
                : java.util.HexFormat.of().formatHex(value));
        m.put("valueEncoding", text ? "utf-8" : "hex");
    }

    private static Map<String, Object> holder(SessionHandle.Peer h) {
        Map<String, Object> holder = new LinkedHashMap<>();
        holder.put("address", h.address());
        if (h.identity() != null) {
            holder.put("identity", h.identity());
        }
        return holder;
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    @Override
    public void destroy() {
        thread.shutdownNow();
    }
}
