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
 */
public record Config(List<InetSocketAddress> addresses, int poolSize, long connectTimeoutNanos,
        long transportDeadlineNanos, long responseGraceNanos, long marginFloorNanos, double driftRate,
        String name, SSLContext sslContext, boolean verifyHostname) {

    public Config {
        addresses = List.copyOf(addresses);
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("at least one server address is needed");
        }
    }
}
