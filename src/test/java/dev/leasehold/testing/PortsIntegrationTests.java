package dev.leasehold.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.leasehold.testing.support.Ports;

/**
 * {@link Ports#freeRange}: the ports a script numbers up from one base (bin/leasehold-cluster's
 * BASE_PORT) are all bindable, below the ephemeral range, and never handed out twice.
 */
class PortsIntegrationTests {

    @Test
    void aRangeIsFifteenBindablePortsBelowTheEphemeralRange() throws IOException {
        int base = Ports.freeRange(15);
        assertThat(base + 15).isLessThanOrEqualTo(ephemeralLow());
        List<ServerSocket> bound = new ArrayList<>();
        try {
            for (int p = base; p < base + 15; p++) {
                ServerSocket s = new ServerSocket();
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), p), 1);
                bound.add(s);
            }
            int next = Ports.freeRange(15);
            assertThat(Math.abs(next - base)).as("a second range (%d) while the first (%d) is bound", next, base)
                    .isGreaterThanOrEqualTo(15);
        } finally {
            for (ServerSocket s : bound) {
                s.close();
            }
        }
    }

    private static int ephemeralLow() throws IOException {
        try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            return Integer.parseInt(r.readLine().trim().split("\\s+")[0]);
        }
    }

    @Test
    void aRangeSkipsAPortTakenWhereItWouldStart() throws IOException {
        // Ports hands out ports from a cursor that free() leaves just past its port: binding that
        // next port ourselves puts a taken port exactly where the range would start.
        int checked = 0;
        for (int i = 0; i < 20 && checked < 5; i++) {
            int next = Ports.free() + 1;
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), next), 1);
                int base = Ports.freeRange(3);
                assertThat(next).as("range %d-%d", base, base + 2).isNotIn(base, base + 1, base + 2);
                checked++;
            } catch (java.net.BindException takenByOthers) {
                // another process holds it: try the next one
            }
        }
        assertThat(checked).as("cases checked").isEqualTo(5);
    }
}
