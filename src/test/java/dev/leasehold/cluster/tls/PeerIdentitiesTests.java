package dev.leasehold.cluster.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.Test;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.testing.TestPki;

/** The member-identity rules of cluster TLS ({@link PeerIdentities}, docs/security.md). */
class PeerIdentitiesTests {

    private static final TestPki CA = TestPki.ca("identities");

    private static TestPki.Issued cert(GeneralName... sans) {
        return CA.peer("x", sans);
    }

    private static GeneralName dns(String n) {
        return new GeneralName(GeneralName.dNSName, n);
    }

    private static GeneralName ip(String a) {
        return new GeneralName(GeneralName.iPAddress, a);
    }

    private static GeneralName uri(String u) {
        return new GeneralName(GeneralName.uniformResourceIdentifier, u);
    }

    private static PeerIdentities pods() {
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            peers.put("leasehold-" + i, new ClusterSettings.Peer(
                    "leasehold-" + i + ".leasehold-peers.locks.svc.cluster.local:7430", "h:7420"));
        }
        return PeerIdentities.of(peers);
    }

    @Test
    void aDnsSanEqualToTheRaftHostNamesThatMemberCaseInsensitively() {
        assertThat(pods().memberNamedBy(cert(dns("LEASEHOLD-1.leasehold-peers.locks.svc.cluster.local")).certificate()))
                .isEqualTo("leasehold-1");
    }

    @Test
    void aCertificateNamingNoRaftHostNamesNobody() {
        assertThat(pods().memberNamedBy(cert(dns("leasehold-3.leasehold-peers.locks.svc.cluster.local"),
                dns("billing.locks.svc")).certificate())).isNull();
        assertThat(pods().memberNamedBy(cert().certificate())).as("no SAN at all").isNull();
    }

    @Test
    void aWildcardSanNamesNoMemberBecauseItAlsoCoversNonMembers() {
        assertThat(pods().memberNamedBy(cert(dns("*.leasehold-peers.locks.svc.cluster.local")).certificate())).isNull();
    }

    @Test
    void theSubjectCommonNameIsNeverUsed() {
        TestPki.Issued c = CA.peer("leasehold-0.leasehold-peers.locks.svc.cluster.local");
        assertThat(pods().memberNamedBy(c.certificate())).isNull();
    }

    @Test
    void anIpRaftHostIsNamedByAnIpSanOnlyNotByADnsSanWithTheSameText() {
        PeerIdentities ids = PeerIdentities.of(Map.of("a", new ClusterSettings.Peer("10.0.0.7:7430", "h:1")));
        assertThat(ids.memberNamedBy(cert(ip("10.0.0.7")).certificate())).isEqualTo("a");
        assertThat(ids.memberNamedBy(cert(dns("10.0.0.7")).certificate())).isNull();
        assertThat(ids.memberNamedBy(cert(ip("10.0.0.8")).certificate())).isNull();
    }

    @Test
    void ipv6RaftHostsCompareAsAddresses() {
        PeerIdentities ids = PeerIdentities.of(Map.of("a", new ClusterSettings.Peer("[fd00::0:7]:7430", "h:1")));
        assertThat(ids.memberNamedBy(cert(ip("fd00:0:0:0:0:0:0:7")).certificate())).isEqualTo("a");
    }

    @Test
    void anExplicitIdentityReplacesTheHostRule() {
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        peers.put("n1", new ClusterSettings.Peer("127.0.0.1:7430", "h:1", "uri:spiffe://c/n1"));
        peers.put("n2", new ClusterSettings.Peer("127.0.0.1:7431", "h:1", "uri:spiffe://c/n2"));
        PeerIdentities ids = PeerIdentities.of(peers);
        assertThat(ids.memberNamedBy(cert(ip("127.0.0.1"), uri("spiffe://c/n2")).certificate())).isEqualTo("n2");
        assertThat(ids.memberNamedBy(cert(ip("127.0.0.1")).certificate())).as("the host alone no longer names n1")
                .isNull();
        assertThat(ids.memberNamedBy(cert(uri("spiffe://c/N2")).certificate())).as("URIs compare exactly").isNull();
    }

    @Test
    void explicitDnsAndIpIdentitiesAreTyped() {
        Map<String, ClusterSettings.Peer> peers = Map.of("a", new ClusterSettings.Peer("h:1", "h:1", "dns:Peer.A"),
                "b", new ClusterSettings.Peer("h:2", "h:1", "ip:192.168.1.2"));
        PeerIdentities ids = PeerIdentities.of(peers);
        assertThat(ids.memberNamedBy(cert(dns("peer.a")).certificate())).isEqualTo("a");
        assertThat(ids.memberNamedBy(cert(ip("192.168.1.2")).certificate())).isEqualTo("b");
        assertThat(ids.memberNamedBy(cert(uri("dns:peer.a")).certificate())).isNull();
    }

    @Test
    void anUntypedIdentityIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> PeerIdentities.of(Map.of("n1", new ClusterSettings.Peer("h:1", "h:1", "n1.example"))))
                .hasMessage("Invalid leasehold.cluster.peers.n1.identity = n1.example: must be dns:<name>, "
                        + "ip:<address> or uri:<uri>");
        assertThatThrownBy(() -> PeerIdentities.of(Map.of("n1", new ClusterSettings.Peer("h:1", "h:1", "ip:host"))))
                .hasMessageContaining("leasehold.cluster.peers.n1.identity = ip:host");
    }

    @Test
    void membersOnOneHostShareTheHostIdentityAndTheStartFailsNamingThemAndTheFix() {
        Map<String, ClusterSettings.Peer> oneHost = new java.util.LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            oneHost.put("n" + i, new ClusterSettings.Peer("127.0.0.1:743" + i, "127.0.0.1:742" + i));
        }
        assertThatThrownBy(() -> PeerIdentities.of(oneHost)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("members n1, n2, n3 share the peer identity ip:127.0.0.1 (the host of their "
                        + "leasehold.cluster.peers.<id>.raft-address")
                .hasMessageContaining("leasehold.cluster.peers.n2.identity=uri:spiffe://<domain>/n2");

        // an identity of their own per member: accepted, and each certificate names its member
        oneHost.replaceAll((id, p) -> new ClusterSettings.Peer(p.raftAddress(), p.clientAddress(), "uri:spiffe://t/" + id));
        assertThat(PeerIdentities.of(oneHost).expected()).containsEntry("n2", "uri:spiffe://t/n2");

        // two explicit identities that are equal are refused as well, naming the setting
        oneHost.put("n3", new ClusterSettings.Peer("127.0.0.1:7433", "127.0.0.1:7423", "uri:spiffe://t/n2"));
        assertThatThrownBy(() -> PeerIdentities.of(oneHost))
                .hasMessageContaining("members n2, n3 share the peer identity uri:spiffe://t/n2 (their "
                        + "leasehold.cluster.peers.<id>.identity)");
    }

    @Test
    void describeListsTheSansItMatchesOn() {
        assertThat(PeerIdentities.describe(cert(dns("A.b"), ip("127.0.0.1"), uri("spiffe://x")).certificate()))
                .isEqualTo("dns:a.b, ip:127.0.0.1, uri:spiffe://x");
        assertThat(PeerIdentities.describe(cert().certificate())).isEqualTo("no DNS, IP or URI SAN");
    }

    @Test
    void membersAddedOnlineAreNamedByTheirIdentityOrHostAndRemovedOnesByNothing() {
        PeerIdentities now = pods().with(Map.of(
                "leasehold-3", new ClusterSettings.Peer("leasehold-3.leasehold-peers.locks.svc.cluster.local:7430", "h:7420"),
                "n9", new ClusterSettings.Peer("10.0.0.9:7430", "h:7420", "uri:spiffe://c/n9")), java.util.Set.of("leasehold-1"));
        assertThat(now.memberNamedBy(cert(dns("leasehold-3.leasehold-peers.locks.svc.cluster.local")).certificate()))
                .isEqualTo("leasehold-3");
        assertThat(now.memberNamedBy(cert(uri("spiffe://c/n9")).certificate())).isEqualTo("n9");
        assertThat(now.memberNamedBy(cert(ip("10.0.0.9")).certificate())).as("n9 is named by its identity only").isNull();
        assertThat(now.memberNamedBy(cert(dns("leasehold-1.leasehold-peers.locks.svc.cluster.local")).certificate()))
                .as("a removed founding member").isNull();
        assertThat(pods().memberNamedBy(cert(dns("leasehold-1.leasehold-peers.locks.svc.cluster.local")).certificate()))
                .as("the configured identities themselves are unchanged").isEqualTo("leasehold-1");
    }
}
