package dev.leasehold.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A private network for partition tests: one Linux network namespace per server node
 * ({@code lhp<id>-n1..}), a switch namespace ({@code lhp<id>-sw}) holding a bridge, and one veth
 * pair per node from its namespace into the switch. The test's clients reach the nodes through one
 * more veth pair whose outer end is in the test's own namespace ({@code 10.251.X.100}); everything
 * else lives in namespaces this class made. Addresses are {@code 10.251.X.(i+1)} on a /24 with a
 * random X that no route of this machine uses yet (a killed run leaves its namespaces, and the kernel
 * tears a deleted one down only a little later: a second route to the same /24 would send the
 * clients to the wrong switch). Nothing reaches past the machine: there is no route out.
 *
 * <p>Faults: a node's link down/up (cut from everybody), and per-namespace nftables rules that
 * drop packets to or from chosen peers (a cut between two nodes, a one-way cut, a node cut from its
 * peers but not from the clients). {@code tc netem} is not used: these kernels lack it.
 *
 * <p>{@link #close()} deletes every namespace (and with them every veth and rule); a shutdown hook
 * does the same if the JVM ends first. {@link #unavailableReason()} says why the test must skip
 * (not root, no {@code ip} or {@code nft}).
 */
public final class PartitionNet implements AutoCloseable {

    private final String prefix;
    private final int subnet;
    private final int nodes;
    private final List<String> namespaces = new ArrayList<>();
    private final Thread cleanup = new Thread(this::deleteAll, "partition-net-cleanup");
    private volatile boolean closed;

    private PartitionNet(int nodes, Random random) {
        this.nodes = nodes;
        this.prefix = "lhp" + Integer.toHexString(0x10000 + random.nextInt(0xEFFFF));
        this.subnet = freeSubnet(1 + random.nextInt(250));
    }

    /** The first X from {@code start} on (wrapping) for which this machine has no route to 10.251.X.0/24. */
    private static int freeSubnet(int start) {
        String routes;
        try {
            Process p = new ProcessBuilder("ip", "-4", "route", "show").redirectErrorStream(true).start();
            routes = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            return start; // no ip: build() fails with the reason
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return start;
        }
        for (int i = 0; i < 250; i++) {
            int x = 1 + (start - 1 + i) % 250;
            if (!routes.contains("10.251." + x + ".0/24")) {
                return x;
            }
        }
        return start;
    }

    /** Null if namespaces can be made here; else why not (the test skips with this message). */
    public static String unavailableReason() {
        try {
            Process id = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
            String uid = new String(id.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!"0".equals(uid)) {
                return "partition tests need root to create network namespaces (uid " + uid + ")";
            }
            for (String tool : List.of("ip", "nft")) {
                Process p = new ProcessBuilder("sh", "-c", "command -v " + tool).start();
                if (p.waitFor() != 0) {
                    return "partition tests need '" + tool + "' (Debian: apt-get install iproute2 nftables; .ci/run does)";
                }
            }
            return null;
        } catch (IOException e) {
            return "cannot check for root, ip and nft: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** Builds the network: namespaces, bridge, veths, addresses, empty filter chains. */
    public static PartitionNet create(int nodes, Random random) throws IOException {
        PartitionNet n = new PartitionNet(nodes, random);
        Runtime.getRuntime().addShutdownHook(n.cleanup);
        try {
            n.build();
        } catch (IOException | RuntimeException e) {
            n.close();
            throw e;
        }
        return n;
    }

    private void build() throws IOException {
        String sw = prefix + "-sw";
        netns(sw);
        run("ip", "-n", sw, "link", "add", "name", "br0", "type", "bridge");
        run("ip", "-n", sw, "link", "set", "br0", "up");
        for (int i = 0; i < nodes; i++) {
            String ns = namespace(i);
            netns(ns);
            String outer = prefix + "-" + (i + 1);
            run("ip", "link", "add", outer, "type", "veth", "peer", "name", "eth0", "netns", ns);
            run("ip", "link", "set", outer, "netns", sw);
            run("ip", "-n", sw, "link", "set", outer, "master", "br0");
            run("ip", "-n", sw, "link", "set", outer, "up");
            run("ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
            run("ip", "-n", ns, "link", "set", "eth0", "up");
            run("ip", "-n", ns, "link", "set", "lo", "up");
            nft(i, "add table inet lhp\n"
                    + "add chain inet lhp in { type filter hook input priority 0; policy accept; }\n"
                    + "add chain inet lhp out { type filter hook output priority 0; policy accept; }\n");
        }
        // The clients: this JVM's namespace, one veth into the switch.
        String outer = prefix + "-c";
        run("ip", "link", "add", outer, "type", "veth", "peer", "name", prefix + "-cs", "netns", sw);
        run("ip", "-n", sw, "link", "set", prefix + "-cs", "master", "br0");
        run("ip", "-n", sw, "link", "set", prefix + "-cs", "up");
        run("ip", "addr", "add", clientAddress() + "/24", "dev", outer);
        run("ip", "link", "set", outer, "up");
    }

    /** The namespace of node i (0-based); servers run in it via {@link #exec(int)}. */
    public String namespace(int i) {
        return prefix + "-n" + (i + 1);
    }

    /** Node i's address. */
    public String address(int i) {
        return "10.251." + subnet + "." + (i + 1);
    }

    /** The clients' address (in this JVM's namespace). */
    public String clientAddress() {
        return "10.251." + subnet + ".100";
    }

    /** The command prefix that runs a program inside node i's namespace. */
    public List<String> exec(int i) {
        return List.of("ip", "netns", "exec", namespace(i));
    }

    /** Node i's link to the switch down (cut from everybody, clients too) or up. */
    public void link(int i, boolean up) throws IOException {
        run("ip", "-n", prefix + "-sw", "link", "set", prefix + "-" + (i + 1), up ? "up" : "down");
    }

    /** Node {@code from} no longer sends to (nor, if both ways, hears from) node {@code to}. */
    public void cut(int from, int to, boolean bothWays) throws IOException {
        nft(from, "add rule inet lhp out ip daddr " + address(to) + " drop\n");
        if (bothWays) {
            nft(from, "add rule inet lhp in ip saddr " + address(to) + " drop\n");
            nft(to, "add rule inet lhp out ip daddr " + address(from) + " drop\n");
            nft(to, "add rule inet lhp in ip saddr " + address(from) + " drop\n");
        }
    }

    /**
     * Node {@code from} can no longer open a connection to node {@code to}; {@code to} still opens
     * connections to {@code from} and hears its answers on them (conntrack: only new flows drop).
     */
    public void refuseDial(int from, int to) throws IOException {
        nft(from, "add rule inet lhp out ip daddr " + address(to) + " ct state new drop\n");
    }

    /** Every packet filter removed and every link up. */
    public void heal() throws IOException {
        for (int i = 0; i < nodes; i++) {
            nft(i, "flush chain inet lhp in\nflush chain inet lhp out\n");
            link(i, true);
        }
    }

    private void nft(int node, String script) throws IOException {
        run(List.of("ip", "netns", "exec", namespace(node), "nft", "-f", "-"), script);
    }

    private void netns(String name) throws IOException {
        run("ip", "netns", "add", name);
        namespaces.add(name);
    }

    private static void run(String... cmd) throws IOException {
        run(List.of(cmd), null);
    }

    private static void run(List<String> cmd, String stdin) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no exit within 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", cmd), e);
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out.trim()
                    + (stdin == null ? "" : "\n" + stdin));
        }
    }

    private synchronized void deleteAll() {
        if (closed) {
            return;
        }
        closed = true;
        // Deleting a namespace deletes its veth ends, so the pair and the outer end go too.
        for (String ns : namespaces) {
            try {
                run("ip", "netns", "del", ns);
            } catch (IOException e) {
                System.err.println("PartitionNet: could not delete namespace " + ns + ": " + e.getMessage());
            }
        }
    }

    @Override
    public void close() {
        deleteAll();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException e) {
            // already shutting down: the hook runs (and finds nothing left to do)
        }
    }
}
