package dev.leasehold.testing.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for servers whose port must be known before they start: a cluster's nodes are
 * told each other's Raft and client ports in their settings, so they cannot bind port 0 and report
 * back. A server that can bind port 0 itself should (see {@link LoopbackServer}); this is for the
 * rest.
 *
 * <h2>Why not "bind port 0, close, pass the port on"</h2>
 * Port 0 hands out a port from the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range},
 * 32768-60999 by default), the same range every outgoing {@code connect()} on the machine takes its
 * local port from. Between the probe's close and the server's bind, any connection (three Raft
 * nodes dialling each other, a client, Maven) may take it: CI failed that way, "Cannot bind the
 * protocol port 0.0.0.0:44551 ... Address already in use" on a port found free a moment before.
 * Ports here come from below the ephemeral range, which the kernel never gives to {@code connect()};
 * each one is checked free by binding it, and one JVM never hands out the same port twice. The
 * starting point is random, so test JVMs running side by side rarely try the same ports.
 */
public final class Ports {

    /** Lowest port handed out: above the well-known and most registered service ports. */
    static final int LOW = 15000;

    private static final int HIGH = belowEphemeralRange(); // exclusive
    private static int next = LOW + ThreadLocalRandom.current().nextInt(Math.max(1, HIGH - LOW));

    private Ports() {
    }

    /** A loopback port that is free now and that no connect() will take before a server binds it. */
    public static int free() {
        return freeRange(1);
    }

    /**
     * The first of {@code count} consecutive loopback ports that are all free now, for a script
     * that numbers its servers' ports up from one base.
     */
    public static synchronized int freeRange(int count) {
        if (count < 1 || count > HIGH - LOW) {
            throw new IllegalArgumentException("count " + count + " outside 1-" + (HIGH - LOW));
        }
        for (int tries = 0; tries < HIGH - LOW; tries++) {
            int base = next + count <= HIGH ? next : LOW;
            int port = base;
            while (port < base + count && bindable(port)) {
                port++;
            }
            boolean whole = port == base + count;
            int after = whole ? port : port + 1; // past the range handed out, or past the taken port
            next = after >= HIGH ? LOW : after;
            if (whole) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free loopback port(s) in " + LOW + "-" + (HIGH - 1));
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            // No SO_REUSEADDR: a port with connections in TIME_WAIT is skipped, as a server
            // binding it without the option would fail.
            s.setReuseAddress(false);
            s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** The first ephemeral port (from /proc where there is one), or 32768. */
    static int belowEphemeralRange() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        int first = 32768;
        // A stream, not Files.readString: on this kernel that returned "3" from the file (it
        // trusts the size /proc reports, 0), where a plain read returns "32768\t60999".
        try (BufferedReader r = Files.newBufferedReader(range)) {
            String line = r.readLine();
            if (line != null) {
                first = Integer.parseInt(line.trim().split("\\s+")[0]);
            }
        } catch (IOException | RuntimeException e) {
            // keep the Linux default
        }
        if (first - LOW < 2000) {
            throw new UncheckedIOException(new IOException("the ephemeral port range starts at " + first
                    + " (net.ipv4.ip_local_port_range): no room below it for test ports from " + LOW));
        }
        return first;
    }
}
