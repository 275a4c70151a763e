package dev.leasehold.client;

import java.net.InetSocketAddress;

import dev.leasehold.protocol.Wire;

/** Server addresses as users write them ({@code host:port}, {@code host}, {@code [v6]:port}). */
final class Addresses {

    /** How to write a server address, for the messages that refuse one. */
    static final String ADDRESS_FORM = "write host:port with a port from 1 to 65535 (e.g. locks-0:7420), "
            + "host alone for port " + Wire.DEFAULT_PORT + ", or [v6-address]:port";

    private Addresses() {
    }

    /** An unresolved address from {@code host:port} (port defaults to 7420), or an IllegalArgumentException saying why not. */
    static InetSocketAddress parse(String server) {
        if (server == null || server.isBlank()) {
            throw new IllegalArgumentException("server address is empty; " + ADDRESS_FORM);
        }
        String host = server.trim();
        int port = Wire.DEFAULT_PORT;
        int colon = host.lastIndexOf(':');
        boolean bracketed = host.startsWith("[");
        if (colon > 0 && (bracketed ? host.lastIndexOf(']') < colon : host.indexOf(':') == colon)) {
            String digits = host.substring(colon + 1);
            try {
                port = Integer.parseInt(digits);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port in server address '" + server + "': '" + digits
                        + "' is not a number; " + ADDRESS_FORM);
            }
            host = host.substring(0, colon);
        }
        if (bracketed && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad port in server address '" + server + "': " + port
                    + " is not 1 to 65535; " + ADDRESS_FORM);
        }
        if (host.isEmpty() || (colon == 0 && host.indexOf(':', 1) < 0)) {
            throw new IllegalArgumentException("server address '" + server + "' has no host; " + ADDRESS_FORM);
        }
        return InetSocketAddress.createUnresolved(host, port);
    }
}
