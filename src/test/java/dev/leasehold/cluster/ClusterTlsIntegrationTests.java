package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;
import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.TestPki;

/**
 * Three real node processes with cluster TLS (PROTOCOL.md section 10, docs/security.md): they
 * elect, serve grants and fail over over mutual TLS. Then four outsiders try Ratis's admin
 * service on the Raft port, which shares the port and its TLS, to make themselves members
 * ({@code setConfiguration} with an extra peer): plaintext, TLS without a certificate, a
 * self-signed certificate, and a certificate from the cluster's own CA that names no member.
 * Each is refused in the handshake, counted by reason on
 * {@code leasehold_cluster_peer_refused_total}, logged once at WARN, and the term and the
 * configuration do not move.
 */
class ClusterTlsIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void aTlsClusterServesAndFailsOverAndRefusesEveryOutsider() throws Exception {
        try (TlsCluster cluster = new TlsCluster(dir)) {
            for (int i = 0; i < 3; i++) {
                cluster.launchTls(i);
            }
            for (int i = 0; i < 3; i++) {
                cluster.awaitLog(i, "Leasehold protocol listening", 120_000);
            }
            int leader = cluster.leader(60_000);
            assertThat(cluster.nodes[leader].output()).contains("Mutual TLS on Raft connections from SSL bundle 'peer'",
                    "(mutual TLS, leasehold.cluster.tls.bundle = peer)");

            // Fail over: the leader is killed once every node has its log, another node serves.
            cluster.awaitReplicated(leader, 60_000);
            cluster.nodes[leader].kill9();
            long t0 = System.nanoTime();
            int next = cluster.leader(30_000);
            System.out.printf("TLS failover n%d -> n%d: first grant after %d ms%n", leader + 1, next + 1,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            assertThat(next).isNotEqualTo(leader);
            cluster.launchTls(leader); // back as a follower
            cluster.awaitLog(leader, "leader is now", 120_000);

            Actuator[] actuators = new Actuator[3];
            for (int i = 0; i < 3; i++) {
                actuators[i] = new Actuator(cluster.httpPorts[i]);
            }
            long termBefore = term(actuators[next]);

            TestPki foreign = TestPki.ca("Somebody else's CA");
            TestPki.Issued selfSigned = PeerCerts.nodeCert(foreign, "n1"); // claims to be n1, wrong CA
            TestPki.Issued intruder = cluster.ca.peer("intruder", new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                    new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://leasehold-test/intruder"));

            List<String> outcomes = new ArrayList<>();
            outcomes.add("plaintext: " + tryToJoin(cluster, null));
            outcomes.add("no certificate: " + tlsWithoutCertificate(cluster, next));
            outcomes.add("foreign CA: " + tryToJoin(cluster, tls(cluster.ca, selfSigned)));
            outcomes.add("same CA, not a member: " + tryToJoin(cluster, tls(cluster.ca, intruder)));
            outcomes.forEach(o -> System.out.println("refused peer, " + o));

            String[][] reasons = {{"plaintext"}, {"no-certificate"}, {"untrusted"}, {"not-a-member"}};
            for (String[] reason : reasons) {
                double total = 0;
                for (Actuator a : actuators) {
                    total += a.scrape().value("leasehold_cluster_peer_refused_total", "reason", reason[0]);
                }
                System.out.printf("leasehold_cluster_peer_refused_total{reason=%s} summed over the nodes: %.0f%n",
                        reason[0], total);
                assertThat(total).as("refusals counted as %s", reason[0]).isGreaterThanOrEqualTo(1);
            }
            assertThat(term(actuators[next])).as("term after the outsiders").isEqualTo(termBefore);
            assertThat(cluster.leader(10_000)).as("the same leader still serves").isEqualTo(next);
            assertThat(cluster.logs()).contains("Refused Raft connection from /127.0.0.1:")
                    .doesNotContain("intruder joined");
            for (String o : outcomes) {
                assertThat(o).doesNotContain("SUCCESS");
            }
        }
    }

    private static long term(Actuator a) {
        Number t = a.get("/actuator/health").json("components.cluster.details.term");
        return t.longValue();
    }

    /** TLS for a Ratis client: {@code identity} presented always, {@code trusted} CA trusted. */
    private static GrpcTlsConfig tls(TestPki trusted, TestPki.Issued identity) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", trusted.certificate());
        tmf.init(trust);
        KeyManager km = TestPki.keyManager(identity);
        TrustManager tm = tmf.getTrustManagers()[0];
        return new GrpcTlsConfig(km, tm, true);
    }

    /**
     * A Ratis client that asks the cluster (through the admin service on the Raft ports) to add
     * an extra peer. Returns what it got: an exception on every refused connection.
     */
    private static String tryToJoin(TlsCluster cluster, GrpcTlsConfig tls) {
        List<RaftPeer> peers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            peers.add(RaftPeer.newBuilder().setId(TlsCluster.IDS[i]).setAddress("127.0.0.1:" + cluster.raftPorts[i])
                    .build());
        }
        RaftProperties props = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        Parameters params = new Parameters();
        if (tls != null) {
            GrpcConfigKeys.TLS.setConf(params, tls);
            GrpcConfigKeys.Admin.setTlsConf(params, tls);
            GrpcConfigKeys.Client.setTlsConf(params, tls);
        }
        List<RaftPeer> wanted = new ArrayList<>(peers);
        wanted.add(RaftPeer.newBuilder().setId("intruder").setAddress("127.0.0.1:1").build());
        try (RaftClient client = RaftClient.newBuilder().setProperties(props).setParameters(params)
                .setRaftGroup(RaftGroup.valueOf(ClusterNode.GROUP_ID, peers)).setClientId(ClientId.randomId())
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
                        TimeDuration.valueOf(100, TimeUnit.MILLISECONDS))).build()) {
            RaftClientReply reply = client.admin().setConfiguration(wanted);
            return reply.isSuccess() ? "SUCCESS (intruder joined)" : "reply " + reply.getException();
        } catch (IOException | RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return e.getClass().getSimpleName() + " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")";
        }
    }

    /** A TLS client that trusts the cluster's CA but has no certificate to show. */
    private static String tlsWithoutCertificate(TlsCluster cluster, int node) {
        try (SSLSocket s = (SSLSocket) cluster.ca.sslContext(null).getSocketFactory().createSocket("127.0.0.1",
                cluster.raftPorts[node])) {
            s.setSoTimeout(5000);
            s.startHandshake();
            s.getOutputStream().write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            int b = s.getInputStream().read();
            return b < 0 ? "closed by the node" : "SUCCESS? read a byte";
        } catch (IOException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

}
