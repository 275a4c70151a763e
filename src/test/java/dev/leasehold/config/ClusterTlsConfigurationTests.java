package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.security.KeyStore;
import java.util.LinkedHashMap;
import java.util.Map;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.ssl.DefaultSslBundleRegistry;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslStoreBundle;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.cluster.tls.PeerRefusals;
import dev.leasehold.cluster.tls.RaftTls;
import dev.leasehold.testing.TestPki;

/**
 * {@code leasehold.cluster.tls.bundle} from a store bundle (PKCS#12, as {@code spring.ssl.bundle.jks.*}
 * gives), its start-up failures naming the property, and a reload that brings an unusable
 * certificate (kept out, the previous one stays). Spring's bundle registry only: no application
 * context, no socket.
 */
class ClusterTlsConfigurationTests {

    private static final TestPki CA = TestPki.ca("config");

    private static ClusterSettings settings() {
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        peers.put("n1", new ClusterSettings.Peer("127.0.0.1:1", "127.0.0.1:2", "uri:spiffe://t/n1"));
        peers.put("n2", new ClusterSettings.Peer("127.0.0.1:3", "127.0.0.1:4", "uri:spiffe://t/n2"));
        peers.put("n3", new ClusterSettings.Peer("127.0.0.1:5", "127.0.0.1:6", "uri:spiffe://t/n3"));
        return ClusterSettings.defaults("n1", peers, Path.of("raft"));
    }

    private static TestPki.Issued cert(String id) {
        return CA.peer(id, new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://t/" + id));
    }

    private static SslBundle bundle(TestPki.Issued identity, boolean withTrust) throws Exception {
        KeyStore trust = null;
        if (withTrust) {
            trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", CA.certificate());
        }
        return SslBundle.of(SslStoreBundle.of(identity.keyStore(), new String(TestPki.PASSWORD), trust));
    }

    private static RaftTls raftTls(DefaultSslBundleRegistry registry, String name) {
        return ClusterTlsConfiguration.raftTls(new LeaseholdProperties.Cluster.ClusterTls(name), settings(), registry,
                new PeerRefusals(() -> 0));
    }

    @Test
    void unsetMeansPlaintextRaft() {
        assertThat(raftTls(new DefaultSslBundleRegistry(), null)).isNull();
        assertThat(raftTls(new DefaultSslBundleRegistry(), "")).isNull();
    }

    @Test
    void aKeyStoreBundleWithTrustGivesTheNodeItsTls() throws Exception {
        DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry("peer", bundle(cert("n1"), true));
        RaftTls tls = raftTls(registry, "peer");
        assertThat(tls).isNotNull();
        assertThat(tls.property()).isEqualTo("leasehold.cluster.tls.bundle = peer");
    }

    @Test
    void anUnknownBundleNameFailsNamingThePropertyAndTheKnownBundles() throws Exception {
        DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry("client", bundle(cert("n1"), true));
        assertThatThrownBy(() -> raftTls(registry, "peer"))
                .hasMessageStartingWith("Invalid leasehold.cluster.tls.bundle = peer: no such SSL bundle")
                .hasMessageContaining("known: [client]");
    }

    @Test
    void aBundleWithoutTrustMaterialFailsRatherThanTrustingEveryPublicCa() throws Exception {
        DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry("peer", bundle(cert("n1"), false));
        assertThatThrownBy(() -> raftTls(registry, "peer"))
                .hasMessageStartingWith("Invalid leasehold.cluster.tls.bundle = peer: needs trust material");
    }

    @Test
    void aReloadedCertificateThatNamesAnotherNodeIsKeptOut() throws Exception {
        DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry("peer", bundle(cert("n1"), true));
        assertThat(raftTls(registry, "peer")).isNotNull();
        // The update handler refuses it and logs an ERROR; the registry's caller sees no exception.
        assertThatNoException().isThrownBy(() -> registry.updateBundle("peer", bundle(cert("n2"), true)));
        assertThatNoException().isThrownBy(() -> registry.updateBundle("peer", bundle(cert("n1"), true)));
    }
}
