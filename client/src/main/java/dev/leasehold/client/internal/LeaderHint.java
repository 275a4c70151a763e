package dev.leasehold.client.internal;

import java.net.InetSocketAddress;

/**
 * The leader a cluster follower names in its {@code X 8} message, {@code leader=host:port}
 * (PROTOCOL.md 9.12), and how addresses are compared: by host string and port, unresolved, so a
 * hint matches the seed it names however either was written down.
 */
final class LeaderHint {

    private static final String PREFIX = "leader=";

    private LeaderHint() {
    }

    /** The named leader, or null when the message names none (an election runs) or cannot be read. */
    static InetSocketAddress parse(String message) {
        if (message == null || !message.startsWith(PREFIX)) {
            return null;
        }
        String hp = message.substring(PREFIX.length());
        int colon = hp.lastIndexOf(':');
        if (colon <= 0) {
            return null;
        }
        try {
            return InetSocketAddress.createUnresolved(hp.substring(0, colon), Integer.parseInt(hp.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static boolean sameAddress(InetSocketAddress a, InetSocketAddress b) {
        return a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
    }
}
