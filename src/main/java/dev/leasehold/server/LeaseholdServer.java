package dev.leasehold.server;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpServer;

/**
 * The protocol port: a Reactor Netty {@link TcpServer} bound in {@link #start()} and disposed in
 * {@link #stop()}. Each connection gets its own {@link RequestDecoder} and {@link SessionHandler}
 * in front of Reactor's bridge; requests never reach a reactive stream, so there is no per-frame
 * subscription cost.
 */
public final class LeaseholdServer implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(LeaseholdServer.class);

    static final String DECODER = "leasehold.decoder";
    static final String SESSION = "leasehold.session";

    /** Outbound bytes buffered per session before it stops being read (backpressure). */
    private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(32 * 1024, 128 * 1024);

    private final Settings settings;
    private final LockRegistry registry;
    private final NanoClock clock;
    private final ServerStats stats;
    private final ServerSecurity security;
    private volatile DisposableServer server;
    private LoopResources loops;

    /**
     * @param port 0 binds a free port; {@link #port()} tells which
     * @param ioThreads event-loop threads
     */
    public record Settings(String host, int port, int maxKeyBytes, Duration frameTimeout, int maxConnections,
            int ioThreads) {
    }

    public LeaseholdServer(Settings settings, LockRegistry registry, NanoClock clock, ServerStats stats) {
        this(settings, registry, clock, stats, ServerSecurity.NONE);
    }

    /** @param security TLS (every session, no plaintext fallback) and key ACLs, or {@link ServerSecurity#NONE} */
    public LeaseholdServer(Settings settings, LockRegistry registry, NanoClock clock, ServerStats stats,
            ServerSecurity security) {
        this.settings = settings;
        this.registry = registry;
        this.clock = clock;
        this.stats = stats;
        this.security = security;
    }

    @Override
    public void start() {
        loops = LoopResources.create("leasehold-io", settings.ioThreads(), true);
        ConnectionLimiter limiter = new ConnectionLimiter(settings.maxConnections());
        long frameTimeoutNanos = settings.frameTimeout().toNanos();
        ServerTls tls = security.tls();
        server = TcpServer.create()
                .doOnChannelInit((observer, channel, remote) -> {
                    if (tls != null) {
                        tls.install(channel); // before the channel is active: no byte is read in plaintext
                    }
                })
                .host(settings.host())
                .port(settings.port())
                .runOn(loops)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .doOnConnection(conn -> {
                    if (limiter.admit(conn.channel())) {
                        conn.addHandlerLast(DECODER, new RequestDecoder(settings.maxKeyBytes(), frameTimeoutNanos))
                                .addHandlerLast(SESSION, new SessionHandler(registry, clock, stats, security.acl()));
                        // Reactor Netty reads on demand of a reactive subscriber; there is none here:
                        // SessionHandler consumes every frame and manages reads itself (backpressure).
                        conn.channel().config().setAutoRead(true);
                    }
                })
                .handle((in, out) -> Mono.never())
                .bindNow(Duration.ofSeconds(30));
        log.info("Leasehold protocol listening on {}:{} ({}{})", settings.host(), server.port(),
                tls != null ? "TLS" : "plaintext TCP", security.acl() != null ? ", key ACLs" : "");
    }

    @Override
    public void stop() {
        DisposableServer s = server;
        if (s != null) {
            s.disposeNow(Duration.ofSeconds(10));
            server = null;
        }
        if (loops != null) {
            loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            loops = null;
        }
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }

    /** The bound protocol port; -1 when not running. */
    public int port() {
        DisposableServer s = server;
        return s == null ? -1 : s.port();
    }

    @Override
    public int getPhase() {
        // Stop (and so, later, drain) before the web server that carries the health endpoints.
        return SmartLifecycle.DEFAULT_PHASE - 1024;
    }
}
