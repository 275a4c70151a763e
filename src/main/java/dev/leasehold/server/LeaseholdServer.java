package dev.leasehold.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import dev.leasehold.protocol.Wire;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.settings.SettingException;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpServer;

/**
 * The protocol port: a Reactor Netty {@link TcpServer} bound in {@link #start()} and disposed in
 * {@link #stop()}. Each connection gets its own {@link RequestDecoder} and {@link SessionHandler}
 * in front of Reactor's bridge; requests never reach a reactive stream, so there is no per-frame
 * subscription cost.
 *
 * <h2>Drain</h2>
 * {@link #stop()} (SIGTERM, context close) drains within {@code leasehold.drain-timeout}: it
 * closes the listening socket (new connections are refused), makes the registry answer
 * {@code B} to every queued Acquire and to every Acquire from then on, flushes every session
 * and closes it once its answers are written. Held grants get no answer: they stay the
 * holders' until their leases end, which the next start's recovery grace respects. A session
 * that does not read its answers is closed when the timeout runs out. The stop is synchronous,
 * so Spring's {@code spring.lifecycle.timeout-per-shutdown-phase} does not cut it short; the
 * phase makes it stop before the web server (Actuator) begins its own graceful shutdown.
 */
public final class LeaseholdServer implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseholdServer.class);

    static final String DECODER = "leasehold.decoder";
    static final String SESSION = "leasehold.session";

    /** Outbound bytes buffered per session before it stops being read (backpressure). */
    private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(32 * 1024, 128 * 1024);

    private final Settings settings;
    private final LockRegistry registry;
    private final NanoClock clock;
    private final ServerStats stats;
    private final ServerSecurity security;
    private final Outboxes outboxes;
    private volatile DisposableServer server;
    private LoopResources loops;
    /** Open sessions, for the drain. Closed channels leave the group by themselves. */
    private final ChannelGroup sessions = new DefaultChannelGroup("leasehold-sessions", GlobalEventExecutor.INSTANCE);

    /**
     * @param host address to bind ({@code 0.0.0.0}: every interface)
     * @param port 0 binds a free port; {@link #port()} tells which
     * @param frameTimeout reading time a frame may take; also the bound on closing a session after {@code X}
     * @param maxConnections sessions served at once (already fitted to the open-file limit)
     * @param ioThreads event-loop threads
     * @param drainTimeout bound on {@link #stop()}
     * @param listenBacklog connections the kernel may queue before they are accepted (capped by
     *        {@code net.core.somaxconn})
     * @param maxWait {@code leasehold.max-wait}: the longest wait of an {@code M} ({@code X 3}
     *        above it), which a Hello reports (PROTOCOL.md 14.4); 255 s to 3600 s
     * @param maxValueBytes {@code leasehold.max-value-bytes}: the longest value of an {@code M} or a
     *        {@code V} ({@code X 3} above it), which a Hello reports (PROTOCOL.md 17.5); 0 to 1024, 0 = values off
     * @param maxWatchesPerSession {@code leasehold.max-watches-per-session}: open watches of one
     *        session ({@code B watch} beyond, PROTOCOL.md 16.6)
     * @param maxWatchesTotal {@code leasehold.max-watches-total}: open watches of all sessions
     */
    public record Settings(String host, int port, int maxKeyBytes, Duration frameTimeout, int maxConnections,
            int ioThreads, Duration drainTimeout, int listenBacklog, Duration maxWait, int maxValueBytes,
            int maxWatchesPerSession, int maxWatchesTotal) {

        /** Default of {@code leasehold.max-watches-per-session}. */
        public static final int DEFAULT_MAX_WATCHES_PER_SESSION = 1024;
        /** Default of {@code leasehold.max-watches-total}. */
        public static final int DEFAULT_MAX_WATCHES_TOTAL = 100_000;

        /** As the canonical constructor, with the default watch limits. */
        public Settings(String host, int port, int maxKeyBytes, Duration frameTimeout, int maxConnections,
                int ioThreads, Duration drainTimeout, int listenBacklog, Duration maxWait, int maxValueBytes) {
            this(host, port, maxKeyBytes, frameTimeout, maxConnections, ioThreads, drainTimeout, listenBacklog,
                    maxWait, maxValueBytes, DEFAULT_MAX_WATCHES_PER_SESSION, DEFAULT_MAX_WATCHES_TOTAL);
        }

        /** Default of {@code leasehold.max-key-bytes}: the protocol's default, which the client assumes. */
        public static final int DEFAULT_MAX_KEY_BYTES = Wire.DEFAULT_MAX_KEY_BYTES;
        /** Default of {@code leasehold.frame-timeout}, in seconds. */
        public static final int DEFAULT_FRAME_TIMEOUT_SECONDS = 10;
        /** Default of {@code leasehold.max-connections}, before it is fitted to the open-file limit. */
        public static final int DEFAULT_MAX_CONNECTIONS = 20_000;
        /** Default of {@code leasehold.drain-timeout}, in seconds. */
        public static final int DEFAULT_DRAIN_TIMEOUT_SECONDS = 10;
        /** Default of {@code leasehold.listen-backlog}. */
        public static final int DEFAULT_LISTEN_BACKLOG = 4096;
        /** Default of {@code leasehold.max-wait}, in seconds: the longest wait of {@code A} and {@code S}. */
        public static final int DEFAULT_MAX_WAIT_SECONDS = Wire.MAX_SECONDS;
        /** Default of {@code leasehold.max-wait}. */
        public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(DEFAULT_MAX_WAIT_SECONDS);
        /** The smallest {@code leasehold.max-wait}: every {@code A} and {@code S} wait must fit (14.4). */
        public static final Duration MIN_MAX_WAIT = Duration.ofMillis(Wire.MIN_MAX_WAIT_MILLIS);
        /** The largest {@code leasehold.max-wait}. */
        public static final Duration MAX_MAX_WAIT = Duration.ofMillis(Wire.MAX_WAIT_MILLIS_CEILING);
        /** Default of {@code leasehold.max-value-bytes} (PROTOCOL.md 17.5). */
        public static final int DEFAULT_MAX_VALUE_BYTES = 256;
        /** The largest {@code leasehold.max-value-bytes}; 0 is the smallest (values off). */
        public static final int MAX_MAX_VALUE_BYTES = 1024;

        /** As the canonical constructor, with the default {@code leasehold.max-value-bytes}. */
        public Settings(String host, int port, int maxKeyBytes, Duration frameTimeout, int maxConnections,
                int ioThreads, Duration drainTimeout, int listenBacklog, Duration maxWait) {
            this(host, port, maxKeyBytes, frameTimeout, maxConnections, ioThreads, drainTimeout, listenBacklog,
                    maxWait, DEFAULT_MAX_VALUE_BYTES);
        }

        /**
         * The server's defaults on {@code host:port}: what {@code LeaseholdProperties} binds when
         * nothing else is set (its {@code @DefaultValue}s are these constants), with one event
         * loop per core. The configured server also fits {@code maxConnections} to the open-file
         * limit ({@link ConnectionBudget}); this does not, as an embedded server shares its JVM's.
         */
        public static Settings defaults(String host, int port) {
            return new Settings(host, port, DEFAULT_MAX_KEY_BYTES, Duration.ofSeconds(DEFAULT_FRAME_TIMEOUT_SECONDS),
                    DEFAULT_MAX_CONNECTIONS, Runtime.getRuntime().availableProcessors(),
                    Duration.ofSeconds(DEFAULT_DRAIN_TIMEOUT_SECONDS), DEFAULT_LISTEN_BACKLOG, DEFAULT_MAX_WAIT,
                    DEFAULT_MAX_VALUE_BYTES);
        }
    }

    /**
     * @param security TLS (every session, no plaintext fallback) and key ACLs, or {@link ServerSecurity#NONE}
     * @param outboxes {@link Outboxes#direct()} on a single node; {@link Outboxes#commitGated} on a
     *        cluster node: who serves and when answers may go out
     */
    public LeaseholdServer(Settings settings, LockRegistry registry, NanoClock clock, ServerStats stats,
            ServerSecurity security, Outboxes outboxes) {
        this.settings = settings;
        this.registry = registry;
        this.clock = clock;
        this.stats = stats;
        this.security = security;
        this.outboxes = outboxes;
    }

    /**
     * The protocol port cannot be bound: a valid setting this host cannot use now, most often a port
     * another process holds. Start-up stops with it, and the report says how to find that process.
     */
    static SettingException bindFailure(String host, int port, RuntimeException e) {
        return SettingException.unusable("leasehold.port", port, "Cannot bind the protocol port " + host + ":" + port
                + " (leasehold.address, leasehold.port): " + e.getMessage(), "Stop the process that listens on port "
                + port + " (ss -ltnp 'sport = :" + port + "' shows it) or set another leasehold.port; leasehold.address"
                + " must be an address of this host (127.0.0.1, 0.0.0.0 or one of its interfaces' addresses).", e);
    }

    @Override
    public void start() {
        loops = LoopResources.create("leasehold-io", settings.ioThreads(), true);
        ConnectionLimiter limiter = new ConnectionLimiter(settings.maxConnections());
        long frameTimeoutNanos = settings.frameTimeout().toNanos();
        SessionHandler.Shared shared = new SessionHandler.Shared(registry, clock, stats, security.acl(),
                new ProtocolErrorLog(clock), frameTimeoutNanos, outboxes, settings.maxWait().toMillis(),
                settings.maxValueBytes(), settings.maxWatchesPerSession(), settings.maxWatchesTotal());
        ServerTls tls = security.tls();
        TcpServer tcp = TcpServer.create()
                .doOnChannelInit((observer, channel, remote) -> {
                    if (tls != null) {
                        tls.install(channel); // before the channel is active: no byte is read in plaintext
                    }
                })
                .host(settings.host())
                .port(settings.port())
                .runOn(loops)
                .option(ChannelOption.SO_BACKLOG, settings.listenBacklog())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .doOnConnection(conn -> {
                    if (limiter.admit(conn.channel())) {
                        sessions.add(conn.channel());
                        RequestDecoder decoder = new RequestDecoder(settings.maxKeyBytes(), frameTimeoutNanos, clock,
                                registry.maxSharedPerKey(), settings.maxWait().toMillis(), settings.maxValueBytes());
                        conn.addHandlerLast(DECODER, decoder).addHandlerLast(SESSION, new SessionHandler(shared, decoder));
                        // Reactor Netty reads on demand of a reactive subscriber; there is none here:
                        // SessionHandler consumes every frame and manages reads itself (backpressure).
                        conn.channel().config().setAutoRead(true);
                    }
                })
                .handle((in, out) -> Mono.never());
        try {
            server = tcp.bindNow(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            loops.dispose();
            throw bindFailure(settings.host(), settings.port(), e);
        }
        LOG.info("Leasehold protocol listening on {}:{} ({}{}; max-connections {}, listen backlog {})", settings.host(),
                server.port(), tls != null ? "TLS" : "plaintext TCP", security.acl() != null ? ", key ACLs" : "",
                settings.maxConnections(), settings.listenBacklog());
        if (tls == null && !loopback(settings.host())) {
            LOG.warn("The protocol port {}:{} is reachable beyond this host in plaintext, without authentication: "
                    + "anyone who reaches it can take and release any lock. Set leasehold.tls.bundle (and "
                    + "leasehold.tls.client-auth=need, leasehold.acl) or bind loopback (leasehold.address=127.0.0.1); "
                    + "see docs/security.md", settings.host(), server.port());
        }
    }

    /** True for a loopback bind address; false for a wildcard or another interface's (or an unresolvable) one. */
    static boolean loopback(String host) {
        try {
            return java.net.InetAddress.getByName(host).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    @Override
    public void stop() {
        DisposableServer s = server;
        if (s != null) {
            drain(s);
            s.disposeNow(Duration.ofSeconds(2));
            server = null;
        }
        if (loops != null) {
            loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).block(Duration.ofSeconds(5));
            loops = null;
        }
    }

    private void drain(DisposableServer s) {
        long start = System.nanoTime();
        long deadline = start + settings.drainTimeout().toNanos();
        // 1. No new sessions: close the listening socket.
        s.channel().close().awaitUninterruptibly(remainingMillis(deadline));
        // 2. B to every queued Acquire, and to every Acquire that still arrives. The answers
        //    are queued on each channel's event loop ahead of the flush-and-close below.
        int waiters = registry.waiters();
        registry.drain();
        // 3. Flush every session, close it once its answers are out.
        List<ChannelFuture> closing = new ArrayList<>();
        for (Channel ch : sessions) {
            closing.add(ch.closeFuture());
            try {
                ch.eventLoop().execute(() -> {
                    var ctx = ch.pipeline().context(SESSION);
                    if (ctx != null && ctx.handler() instanceof SessionHandler h) {
                        h.draining(ctx); // kept watch events first (PROTOCOL.md 16.8), then flush and close
                    } else {
                        ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
                    }
                });
            } catch (RejectedExecutionException e) {
                ch.close();
            }
        }
        int stuck = 0;
        for (ChannelFuture f : closing) {
            if (!f.awaitUninterruptibly(remainingMillis(deadline))) {
                stuck++;
                f.channel().close(); // not flushed in time (a client that does not read): close anyway
            }
        }
        LOG.info("Drained in {} ms: {} queued Acquires answered B, {} sessions closed{}",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), waiters, closing.size(),
                stuck == 0 ? "" : " (" + stuck + " closed before their answers were flushed: leasehold.drain-timeout)");
    }

    /**
     * Cluster mode: this node stopped serving. Every open session gets {@code X 9} after the
     * answers already on their way (answers still waiting for a commit are dropped by the gate)
     * and closes; its queued Acquires are dropped first, so none can be granted. A lock request
     * read before a session's turn comes is refused with {@code X 9} by its outbox already.
     */
    public void leadershipLost() {
        for (Channel ch : sessions) {
            try {
                ch.eventLoop().execute(() -> {
                    var ctx = ch.pipeline().context(SESSION);
                    if (ctx != null && ctx.handler() instanceof SessionHandler h) {
                        h.stoppedServing(ctx);
                    }
                });
            } catch (RejectedExecutionException e) {
                // The event loop is shutting down: the session is closing anyway.
            }
        }
    }

    private static long remainingMillis(long deadlineNanos) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }

    /** The open sessions' channels (tests look at one session's socket). */
    ChannelGroup sessionChannels() {
        return sessions;
    }

    /** The bound protocol port; -1 when not running. */
    public int port() {
        DisposableServer s = server;
        return s == null ? -1 : s.port();
    }

    @Override
    public int getPhase() {
        // Stops (drains) before Boot's web server graceful shutdown (DEFAULT_PHASE - 1024) and the
        // web server itself (DEFAULT_PHASE - 2048), so /actuator/health answers during the drain.
        // Starts after them, and after the RegistryTimer.
        return SmartLifecycle.DEFAULT_PHASE - 512;
    }
}
