package dev.leasehold.client.internal;

import java.net.InetSocketAddress;
import java.util.List;

import javax.net.ssl.SSLContext;

/**
 * The settings the mechanics need, copied from the public options so that this package does not
 * depend on the public one. Durations are in nanoseconds.
 *
 * @param addresses servers to connect to, tried in turn when a connection cannot be set up
 * @param poolSize sessions kept open at most
 * @param connectTimeoutNanos TCP connect plus the opening ping must finish within this
 * @param transportDeadlineNanos the deadline of a wait=0 Acquire, and of a ping
 * @param responseGraceNanos how long after its deadline a sent Acquire may still be answered;
 *        also how long a written Release or Extend waits for its answer before that session is
 *        given up
 * @param marginFloorNanos smallest lease safety margin
 * @param driftRate assumed worst clock-rate difference between client and server
 * @param name prefix of thread names
 * @param sslContext TLS for every session, or {@code null} for plaintext TCP
 * @param verifyHostname with TLS: check that the server's certificate names the host connected to
 * @param ticker the monotonic clock every time decision reads ({@link Ticker#SYSTEM} if null)
 * @param scheduler runs the deadlines and retries on {@code ticker}'s time; if null the engine
 *        starts the real one, a timer thread named {@code <name>-timer}
 * @param failFast once every server has failed to set up a session (and none is up), requests not
 *        yet sent end at once as unavailable, with each server's failure, instead of at their
 *        deadline (the command line: say why at once)
 * @param protocolRevision {@link #AUTO} (ask each server with a Hello, PROTOCOL.md 9.13),
 *        {@link #V1_3} (never send a Hello or a 1.4 frame) or {@link #V1_4} (an address that answers
 *        the Hello with {@code X 1} is not used)
 */
public record Config(List<InetSocketAddress> addresses, int poolSize, long connectTimeoutNanos,
        long transportDeadlineNanos, long responseGraceNanos, long marginFloorNanos, double driftRate,
        String name, SSLContext sslContext, boolean verifyHostname, Ticker ticker, Scheduler scheduler,
        boolean failFast, int protocolRevision) {

    /** {@code protocolRevision}: ask with a Hello, fall back to 1.3 frames on {@code X 1}. */
    public static final int AUTO = 0;
    /** {@code protocolRevision}: 1.3 frames only. */
    public static final int V1_3 = 13;
    /** {@code protocolRevision}: 1.4 required. */
    public static final int V1_4 = 14;

    public Config {
        addresses = List.copyOf(addresses);
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("at least one server address is needed");
        }
        if (ticker == null) {
            ticker = Ticker.SYSTEM;
        }
    }

    /** Settings on real time: {@link Ticker#SYSTEM} and a timer thread of the engine's own. */
    public Config(List<InetSocketAddress> addresses, int poolSize, long connectTimeoutNanos,
            long transportDeadlineNanos, long responseGraceNanos, long marginFloorNanos, double driftRate,
            String name, SSLContext sslContext, boolean verifyHostname) {
        this(addresses, poolSize, connectTimeoutNanos, transportDeadlineNanos, responseGraceNanos, marginFloorNanos,
                driftRate, name, sslContext, verifyHostname, null, null, false, AUTO);
    }

    /** The same settings with another {@code protocolRevision}. */
    public Config withProtocolRevision(int protocolRevision) {
        return new Config(addresses, poolSize, connectTimeoutNanos, transportDeadlineNanos, responseGraceNanos,
                marginFloorNanos, driftRate, name, sslContext, verifyHostname, ticker, scheduler, failFast,
                protocolRevision);
    }

    /** The revision code of an option value: {@code "auto"}, {@code "1.3"} or {@code "1.4"}. */
    public static int revision(String option) {
        return switch (option) {
            case "1.3" -> V1_3;
            case "1.4" -> V1_4;
            default -> AUTO;
        };
    }

    /** The same settings, failing fast or not (see {@code failFast}). */
    public Config withFailFast(boolean failFast) {
        return new Config(addresses, poolSize, connectTimeoutNanos, transportDeadlineNanos, responseGraceNanos,
                marginFloorNanos, driftRate, name, sslContext, verifyHostname, ticker, scheduler, failFast,
                protocolRevision);
    }

    /** The same settings on another clock and scheduler (tests). */
    public Config withTime(Ticker ticker, Scheduler scheduler) {
        return new Config(addresses, poolSize, connectTimeoutNanos, transportDeadlineNanos, responseGraceNanos,
                marginFloorNanos, driftRate, name, sslContext, verifyHostname, ticker, scheduler, failFast,
                protocolRevision);
    }

    /** {@code host:port} as given (a literal or a name, never {@code /<unresolved>}); IPv6 in brackets. */
    public static String shown(InetSocketAddress address) {
        String host = address.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}
