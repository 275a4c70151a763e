package dev.leasehold.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.leasehold.cluster.ClusterWire.Conn;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.Replication;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.TestPki;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

/**
 * Three node processes on loopback with cluster TLS from a test CA made at test time: node
 * {@code nX}'s certificate has SANs {@code ip:127.0.0.1} (what gRPC checks when dialling
 * 127.0.0.1) and {@code uri:spiffe://leasehold-test/nX}, and each peer's {@code identity} is that
 * URI, so the three certificates are told apart although they share one host. Files are PEM, as
 * a Kubernetes TLS Secret holds them. Closes (kills) every node it started.
 */
final class TlsCluster implements AutoCloseable {

    static final String[] IDS = {"n1", "n2", "n3"};

    final Path dir;
    final TestPki ca = TestPki.ca("Leasehold peer CA");
    final int[] clientPorts = new int[3];
    final int[] raftPorts = new int[3];
    final int[] httpPorts = new int[3];
    final ServerProcess[] nodes = new ServerProcess[3];

    TlsCluster(Path dir) throws IOException {
        this.dir = dir;
        for (int i = 0; i < 3; i++) {
            clientPorts[i] = Ports.free();
            raftPorts[i] = Ports.free();
            httpPorts[i] = Ports.free();
        }
    }

    /** Writes tls.crt, tls.key, ca.crt for node i; returns its certificate directory. */
    Path writeCerts(int i, TestPki.Issued cert) throws IOException {
        Path certs = Files.createDirectories(dir.resolve("certs-" + IDS[i]));
        cert.writePem(certs.resolve("tls.crt"), certs.resolve("tls.key"));
        ca.writeCertificate(certs.resolve("ca.crt"));
        return certs;
    }

    /** The settings of node i; with TLS from {@code certs} unless it is null. */
    Map<String, String> props(int i, Path certs) {
        Map<String, String> p = ServerProcess.props("leasehold.port", String.valueOf(clientPorts[i]),
                "server.port", String.valueOf(httpPorts[i]), "leasehold.cluster.node-id", IDS[i],
                "logging.level.org.apache.ratis", System.getProperty("leasehold.cluster.ratis-log", "WARN"), "management.endpoint.health.show-details", "always");
        for (int j = 0; j < 3; j++) {
            String prefix = "leasehold.cluster.peers." + IDS[j];
            p.put(prefix + ".raft-address", "127.0.0.1:" + raftPorts[j]);
            p.put(prefix + ".client-address", "127.0.0.1:" + clientPorts[j]);
            p.put(prefix + ".identity", "uri:" + PeerCerts.uri(IDS[j]));
        }
        if (certs != null) {
            p.put("leasehold.cluster.tls.bundle", "peer");
            p.put("spring.ssl.bundle.pem.peer.keystore.certificate", "file:" + certs.resolve("tls.crt"));
            p.put("spring.ssl.bundle.pem.peer.keystore.private-key", "file:" + certs.resolve("tls.key"));
            p.put("spring.ssl.bundle.pem.peer.truststore.certificate", "file:" + certs.resolve("ca.crt"));
        }
        return p;
    }

    /** Starts node i with TLS (a fresh certificate naming it) and does not wait. */
    void launchTls(int i) throws IOException {
        nodes[i] = ServerProcess.launch(dir.resolve(IDS[i]), props(i, writeCerts(i, PeerCerts.nodeCert(ca, IDS[i]))));
    }

    /** Starts node i with these settings and does not wait. */
    void launch(int i, Map<String, String> props) throws IOException {
        nodes[i] = ServerProcess.launch(dir.resolve(IDS[i]), props);
    }

    /** The index of the node that grants a fresh key, within the timeout. */
    int leader(long timeoutMs) throws Exception {
        long[] owner = {1};
        try {
            // Polling other processes, which offer nothing to await.
            return Wait.until("a node of n1, n2, n3 to grant a fresh key", Duration.ofMillis(timeoutMs),
                    Duration.ofMillis(100), () -> {
                        StringBuilder seen = new StringBuilder();
                        for (int i = 0; i < 3; i++) {
                            if (nodes[i] == null || !nodes[i].isAlive()) {
                                seen.append(IDS[i]).append(" not running; ");
                                continue;
                            }
                            try (Conn c = new Conn(clientPorts[i])) {
                                owner[0]++;
                                c.send(ClusterWire.acquire(0, 1, owner[0], "leader-probe-" + System.nanoTime()));
                                ClusterWire.Answer a = c.read(2000);
                                if (a.op() == 'A') {
                                    return new Wait.Seen<>(i, IDS[i] + " granted");
                                }
                                seen.append(IDS[i]).append(" answered ").append(a).append("; ");
                            } catch (IOException e) {
                                seen.append(IDS[i]).append(" ").append(e).append("; "); // not up yet, or not the leader
                            }
                        }
                        return Wait.Seen.<Integer>nothing(seen.toString());
                    }, Wait.Seen::found).value();
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + logs(), e);
        }
    }

    /** {@link Replication#awaitEveryNodeApplied}: before a test kills or restarts its leader. */
    void awaitReplicated(int leader, long timeoutMs) throws Exception {
        Replication.awaitEveryNodeApplied(IDS, nodes, i -> new Actuator(httpPorts[i]), leader,
                Duration.ofMillis(timeoutMs), "");
    }

    void awaitLog(int i, String text, long timeoutMs) throws Exception {
        nodes[i].awaitOutput(IDS[i], text, timeoutMs);
    }

    String logs() throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            if (nodes[i] != null) {
                b.append("---- ").append(IDS[i]).append('\n').append(nodes[i].output());
            }
        }
        return b.toString();
    }


    @Override
    public void close() {
        String keep = System.getProperty("leasehold.cluster.logs"); // -Dleasehold.cluster.logs=DIR keeps the node logs
        if (keep != null) {
            try {
                Path out = Files.createDirectories(Path.of(keep));
                Files.writeString(out.resolve("tls-cluster-" + System.currentTimeMillis() + ".log"), logs());
            } catch (IOException e) {
                System.out.println("could not keep the node logs: " + e);
            }
        }
        for (ServerProcess p : nodes) {
            if (p != null) {
                p.close();
            }
        }
    }
}
