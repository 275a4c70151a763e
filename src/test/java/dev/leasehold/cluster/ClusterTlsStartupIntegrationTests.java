package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


/**
 * Mixed settings fail fast, on real processes: a TLS node that reaches a plaintext peer, a
 * plaintext node that reaches TLS peers, and a node whose certificate lacks the clientAuth usage
 * (it would listen but could not dial) each exit at start with a message naming
 * {@code leasehold.cluster.tls.bundle}, instead of joining a cluster they cannot talk to.
 */
class ClusterTlsStartupIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void mixedSettingsAndUnusableCertificatesStopTheStart() throws Exception {
        try (TlsCluster cluster = new TlsCluster(dir)) {
            // n1 plaintext (alone it cannot elect, but it listens); n2 with TLS faces it.
            cluster.launch(0, cluster.props(0, null));
            cluster.awaitLog(0, "Leasehold protocol listening", 120_000);
            cluster.launchTls(1);
            assertThat(cluster.nodes[1].awaitExit(120_000)).as("TLS node facing a plaintext peer exits").isNotNull()
                    .isNotZero();
            assertThat(cluster.nodes[1].output()).contains("Node n2 has leasehold.cluster.tls.bundle = peer, but peer "
                    + "n1 at 127.0.0.1:" + cluster.raftPorts[0] + " speaks plaintext on its Raft port");

            // A certificate for listening only: the same certificate must also dial.
            cluster.launch(1, cluster.props(1, cluster.writeCerts(1, cluster.ca.serverOnly("n2",
                    new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                    new GeneralName(GeneralName.uniformResourceIdentifier, PeerCerts.uri("n2"))))));
            assertThat(cluster.nodes[1].awaitExit(120_000)).as("serverAuth-only certificate").isNotNull().isNotZero();
            assertThat(cluster.nodes[1].output()).contains("Invalid leasehold.cluster.tls.bundle = peer: certificate",
                    "lacks the clientAuth extended key usage");

            // A certificate for another node: n2's bundle holds n3's certificate.
            cluster.launch(1, cluster.props(1, cluster.writeCerts(1, PeerCerts.nodeCert(cluster.ca, "n3"))));
            assertThat(cluster.nodes[1].awaitExit(120_000)).as("certificate naming another node").isNotNull()
                    .isNotZero();
            assertThat(cluster.nodes[1].output()).contains("Invalid leasehold.cluster.tls.bundle = peer: certificate",
                    "does not name node n2");

            // Now the TLS cluster, formed by all three (an empty Raft directory formats only once
            // every peer has been seen without data: docs/cluster.md), and then n3 restarted
            // without TLS, which must not rejoin.
            cluster.nodes[0].close();
            cluster.launchTls(0);
            cluster.launchTls(1);
            cluster.launchTls(2);
            cluster.leader(120_000);
            cluster.nodes[2].close();
            cluster.launch(2, cluster.props(2, null));
            assertThat(cluster.nodes[2].awaitExit(120_000)).as("plaintext node facing TLS peers exits").isNotNull()
                    .isNotZero();
            assertThat(cluster.nodes[2].output()).contains("Node n3 has no leasehold.cluster.tls.bundle, but peer n1 at "
                    + "127.0.0.1:" + cluster.raftPorts[0] + " speaks TLS on its Raft port");
            System.out.println("plaintext n3 facing TLS peers: " + firstLine(cluster.nodes[2].output(), "Node n3 has"));
        }
    }

    private static String firstLine(String log, String containing) {
        for (String line : log.split("\n")) {
            if (line.contains(containing)) {
                return line.trim();
            }
        }
        return "(none)";
    }
}
