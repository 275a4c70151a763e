package dev.leasehold.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for cluster nodes, which must know each other's ports before any binds (a
 * single server binds port 0 itself). Taken from 15000-29999, below Linux's default ephemeral
 * range, so no outgoing connection is given one between the pick and the bind; each is checked
 * free by binding it, and this JVM never hands out the same one twice. (The project's own tests
 * use {@code Ports} from leasehold-test-support, which users do not get.)
 */
final class FreePorts {

    private static final int LOW = 15000;
    private static final int HIGH = 30000; // exclusive
    private static int next = LOW + ThreadLocalRandom.current().nextInt(HIGH - LOW);

    private FreePorts() {
    }

    static synchronized int next() {
        for (int tries = 0; tries < HIGH - LOW; tries++) {
            int port = next;
            next = next + 1 >= HIGH ? LOW : next + 1;
            if (bindable(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port in " + LOW + "-" + (HIGH - 1));
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
