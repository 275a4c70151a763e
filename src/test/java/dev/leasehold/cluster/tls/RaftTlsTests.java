package dev.leasehold.cluster.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.Test;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.cluster.PeerCerts;
import dev.leasehold.settings.SettingException;
import dev.leasehold.testing.TestPki;

/**
 * {@link RaftTls}'s start-up checks, the {@link ReloadingKeyManager} swap, the
 * {@link PeerTrustManager} decisions with their reasons and the {@link PeerRefusals} WARN limit,
 * all in memory (no socket).
 */
class RaftTlsTests {

    private static final TestPki CA = TestPki.ca("raft-tls");
    private static final String BUNDLE = "peer";

    private static ClusterSettings settings() {
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        for (String id : new String[] {"n1", "n2", "n3"}) {
            peers.put(id, new ClusterSettings.Peer("127.0.0.1:1", "127.0.0.1:2", "uri:" + PeerCerts.uri(id)));
        }
        return ClusterSettings.defaults("n1", peers, Path.of("raft"));
    }

    private static X509ExtendedKeyManager km(TestPki.Issued identity) throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(identity.keyStore(), TestPki.PASSWORD);
        return (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
    }

    private static X509ExtendedTrustManager tm(TestPki trusted) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("ca", trusted.certificate());
        tmf.init(ks);
        return (X509ExtendedTrustManager) tmf.getTrustManagers()[0];
    }

    private static RaftTls raftTls(TestPki.Issued own) throws Exception {
        return new RaftTls(BUNDLE, settings(), km(own), tm(CA), own.certificate(), new PeerRefusals(() -> 0));
    }

    @Test
    void aNodeCertificateWithBothUsagesThatNamesThisNodeIsAccepted() throws Exception {
        RaftTls tls = raftTls(PeerCerts.nodeCert(CA, "n1"));
        assertThat(tls.serverParameters()).isNotNull();
        assertThat(tls.clientParameters()).isNotNull();
    }

    @Test
    void aCertificateWithoutClientAuthIsRefusedNamingTheProperty() {
        TestPki.Issued serverOnly = CA.serverOnly("n1", new GeneralName(GeneralName.uniformResourceIdentifier,
                PeerCerts.uri("n1")));
        assertThatThrownBy(() -> raftTls(serverOnly)).isInstanceOf(SettingException.class)
                .hasMessageStartingWith("Invalid leasehold.cluster.tls.bundle = peer: certificate CN=n1")
                .hasMessageContaining("lacks the clientAuth extended key usage, needed to dial peers");
    }

    @Test
    void aCertificateForAnotherNodeIsRefusedSayingWhatThePeersExpect() {
        assertThatThrownBy(() -> raftTls(PeerCerts.nodeCert(CA, "n2")))
                .hasMessageContaining("does not name node n1: its peers expect uri:spiffe://leasehold-test/n1");
    }

    @Test
    void aBundleWithoutAKeyIsRefused() throws Exception {
        TestPki.Issued own = PeerCerts.nodeCert(CA, "n1");
        assertThatThrownBy(() -> new RaftTls(BUNDLE, settings(), km(own), tm(CA), null, new PeerRefusals(() -> 0)))
                .hasMessageContaining("the bundle has no key entry");
    }

    @Test
    void theTrustManagerRefusesForeignChainsAndNonMembersWithTheirReason() throws Exception {
        PeerTrustManager trust = new PeerTrustManager(tm(CA), PeerIdentities.of(settings().peers()),
                new PeerRefusals(() -> 0));
        TestPki.Issued member = PeerCerts.nodeCert(CA, "n2");
        trust.checkClientTrusted(chain(member), "ECDHE_ECDSA");

        TestPki.Issued foreign = PeerCerts.nodeCert(TestPki.ca("foreign"), "n2");
        assertThatThrownBy(() -> trust.checkClientTrusted(chain(foreign), "ECDHE_ECDSA"))
                .isInstanceOfSatisfying(PeerTrustManager.PeerRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PeerRefusals.Reason.UNTRUSTED));

        TestPki.Issued stranger = CA.peer("intruder", new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
        assertThatThrownBy(() -> trust.checkClientTrusted(chain(stranger), "ECDHE_ECDSA"))
                .isInstanceOfSatisfying(PeerTrustManager.PeerRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(PeerRefusals.Reason.NOT_A_MEMBER))
                .hasMessageContaining("names no member of");
    }

    @Test
    void aNewTrustReplacesTheOldForNewHandshakes() throws Exception {
        TestPki next = TestPki.ca("next");
        PeerTrustManager trust = new PeerTrustManager(tm(CA), PeerIdentities.of(settings().peers()),
                new PeerRefusals(() -> 0));
        TestPki.Issued fromNext = PeerCerts.nodeCert(next, "n3");
        assertThatThrownBy(() -> trust.checkClientTrusted(chain(fromNext), "ECDHE_ECDSA"));
        trust.update(tm(next));
        trust.checkClientTrusted(chain(fromNext), "ECDHE_ECDSA");
    }

    @Test
    void theReloadingKeyManagerPresentsTheNewCertificateAndKeepsEachAliasWithItsOwnKey() throws Exception {
        TestPki.Issued first = PeerCerts.nodeCert(CA, "n1");
        TestPki.Issued second = PeerCerts.nodeCert(CA, "n1");
        ReloadingKeyManager keys = new ReloadingKeyManager(km(first));
        String before = keys.chooseEngineServerAlias("EC", null, null);
        assertThat(keys.getCertificateChain(before)[0]).isEqualTo(first.certificate());

        keys.update(km(second));
        String after = keys.chooseEngineServerAlias("EC", null, null);
        assertThat(keys.getCertificateChain(after)[0]).isEqualTo(second.certificate());
        assertThat(keys.getPrivateKey(after)).isEqualTo(second.key());
        // A handshake that chose its alias just before the swap still gets the matching old pair.
        assertThat(keys.getCertificateChain(before)[0]).isEqualTo(first.certificate());
        assertThat(keys.getPrivateKey(before)).isEqualTo(first.key());
    }

    @Test
    void refusalsAreAllCountedButWarnedAtMostOncePerInterval() {
        AtomicLong now = new AtomicLong();
        PeerRefusals refusals = new PeerRefusals(now::get);
        for (int i = 0; i < 5; i++) {
            refusals.refused("/10.0.0.9:4000", PeerRefusals.Reason.PLAINTEXT, "not TLS");
        }
        refusals.refused("/10.0.0.9:4001", PeerRefusals.Reason.NOT_A_MEMBER, "names nobody");
        assertThat(refusals.count(PeerRefusals.Reason.PLAINTEXT)).isEqualTo(5);
        assertThat(refusals.count(PeerRefusals.Reason.NOT_A_MEMBER)).isEqualTo(1);
        assertThat(PeerRefusals.Reason.NOT_A_MEMBER.tag()).isEqualTo("not-a-member");
    }

    @Test
    void handshakeFailuresAreClassifiedFromTheirCauseChain() {
        Exception member = new javax.net.ssl.SSLHandshakeException("x");
        member.initCause(new PeerTrustManager.PeerRefusedException(PeerRefusals.Reason.NOT_A_MEMBER, "m", null));
        assertThat(PeerHandshakes.classify(member)).isEqualTo(PeerRefusals.Reason.NOT_A_MEMBER);
        assertThat(PeerHandshakes.classify(new org.apache.ratis.thirdparty.io.netty.handler.ssl.NotSslRecordException(
                "not an SSL/TLS record"))).isEqualTo(PeerRefusals.Reason.PLAINTEXT);
        assertThat(PeerHandshakes.classify(new javax.net.ssl.SSLHandshakeException("Empty client certificate chain")))
                .isEqualTo(PeerRefusals.Reason.NO_CERTIFICATE);
        assertThat(PeerHandshakes.classify(new javax.net.ssl.SSLHandshakeException("no cipher suites in common")))
                .isEqualTo(PeerRefusals.Reason.HANDSHAKE);
    }

    private static X509Certificate[] chain(TestPki.Issued c) {
        return new X509Certificate[] {c.certificate(), c.issuer().certificate()};
    }
}
