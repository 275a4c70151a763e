package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.cli.CliProcess;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;

/**
 * A node added online to a cluster with mutual TLS between nodes (docs/security.md "Changing
 * members"): the members accept its certificate once the add has recorded its identity, it
 * becomes a voter, and its vote is then needed: with four voters and the leader killed, the
 * other three (the new one among them) elect the next leader.
 */
class ClusterTlsMembershipIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void aNodeAddedOnlineWithItsCertificateVotesInTheTlsCluster() throws Exception {
        CliProcess cli = new CliProcess(Files.createDirectories(dir.resolve("cli")));
        ServerProcess joiner = null;
        try (TlsCluster c = new TlsCluster(dir)) {
            for (int i = 0; i < 3; i++) {
                Map<String, String> p = c.props(i, c.writeCerts(i, PeerCerts.nodeCert(c.ca, TlsCluster.IDS[i])));
                p.put("management.endpoints.web.exposure.include", "health,cluster");
                c.launch(i, p);
            }
            int leader = c.leader(120_000);

            int client = Ports.free();
            int raft = Ports.free();
            Path certs = Files.createDirectories(dir.resolve("certs-n4"));
            PeerCerts.nodeCert(c.ca, "n4").writePem(certs.resolve("tls.crt"), certs.resolve("tls.key"));
            c.ca.writeCertificate(certs.resolve("ca.crt"));
            Map<String, String> p = c.props(0, certs);
            p.put("leasehold.port", String.valueOf(client));
            p.put("server.port", String.valueOf(Ports.free()));
            p.put("leasehold.cluster.node-id", "n4");
            p.put("leasehold.cluster.join", "true");
            p.put("leasehold.cluster.peers.n4.raft-address", "127.0.0.1:" + raft);
            p.put("leasehold.cluster.peers.n4.client-address", "127.0.0.1:" + client);
            p.put("leasehold.cluster.peers.n4.identity", "uri:" + PeerCerts.uri("n4"));
            joiner = ServerProcess.launch(dir.resolve("n4"), p);
            joiner.awaitOutput("n4", "waiting to be added", 120_000);

            int via = (leader + 1) % 3;
            CliProcess.Result added = cli.run("cluster", "add", "n4", "--raft-address", "127.0.0.1:" + raft,
                    "--client-address", "127.0.0.1:" + client, "--identity", "uri:" + PeerCerts.uri("n4"),
                    "--http", "http://127.0.0.1:" + c.httpPorts[via]);
            assertThat(added.exitCode()).as(added.err() + c.logs()).isZero();
            assertThat(added.out()).contains("promoted to voter");
            System.out.println("ClusterTlsMembershipIntegrationTests: " + added.out().lines().findFirst().orElse(""));

            // Four voters: with the leader gone, a majority (3) needs n4's vote over TLS, and the
            // founders' votes, which Ratis counts only from a node whose log is not empty.
            c.awaitReplicated(leader, 60_000);
            c.nodes[leader].kill9();
            long down = System.nanoTime();
            java.util.List<java.net.InetSocketAddress> all = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                all.add(new java.net.InetSocketAddress("127.0.0.1", c.clientPorts[i]));
            }
            all.add(new java.net.InetSocketAddress("127.0.0.1", client));
            int next = new ClusterLoad(all, new ClusterHistory(), 1_000_000).leader(60_000, leader);
            assertThat(next).as("a new leader with n4's vote:\n" + c.logs() + joiner.output()).isNotNegative()
                    .isNotEqualTo(leader);
            System.out.printf("ClusterTlsMembershipIntegrationTests: leader after the kill in %d ms%n",
                    (System.nanoTime() - down) / 1_000_000);
            assertThat(joiner.output()).doesNotContain("REFUSES");
        } finally {
            cli.killAll();
            if (joiner != null) {
                joiner.close();
            }
        }
    }
}
