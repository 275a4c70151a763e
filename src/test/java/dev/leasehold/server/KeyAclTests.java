package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.Test;

import dev.leasehold.testing.TestPki;

/** Identity parsing and matching, prefix checks; no sockets. */
class KeyAclTests {

    static final TestPki CA = TestPki.ca("acl test CA");

    @Test
    void subjectMatchesInCanonicalFormWhateverTheSpacingAndCase() {
        KeyAcl acl = KeyAcl.of(Map.of("subject:cn=Orders,  O=Example", List.of("orders/")));
        KeyAcl.Grant g = acl.grantFor(CA.client("CN=orders,O=example").certificate());
        assertThat(g.identities()).containsExactly("subject:cn=Orders,  O=Example");
        assertThat(g.allows(bytes("orders/1"))).isTrue();
        assertThat(g.allows(bytes("order"))).isFalse();
        assertThat(g.allows(bytes("billing/1"))).isFalse();
    }

    @Test
    void sansMatchByTypeAndGrantsAreTheUnionOfEveryMatchedIdentity() {
        Map<String, List<String>> entries = new LinkedHashMap<>();
        entries.put("dns:Worker.Internal", List.of("jobs/"));
        entries.put("uri:spiffe://c/ns/a/sa/b", List.of("a/"));
        entries.put("email:ops@example.com", List.of("ops/"));
        entries.put("ip:10.0.0.7", List.of("net/"));
        entries.put("subject:CN=nobody", List.of("never/"));
        KeyAcl acl = KeyAcl.of(entries);
        KeyAcl.Grant g = acl.grantFor(CA.client("CN=worker",
                new GeneralName(GeneralName.dNSName, "worker.internal"),
                new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://c/ns/a/sa/b"),
                new GeneralName(GeneralName.rfc822Name, "ops@example.com"),
                new GeneralName(GeneralName.iPAddress, "10.0.0.7")).certificate());
        assertThat(g.identities()).containsExactly("dns:Worker.Internal", "uri:spiffe://c/ns/a/sa/b",
                "email:ops@example.com", "ip:10.0.0.7");
        for (String key : new String[] {"jobs/1", "a/x", "ops/y", "net/z"}) {
            assertThat(g.allows(bytes(key))).as(key).isTrue();
        }
        assertThat(g.allows(bytes("never/1"))).isFalse();
        // A SAN value in the wrong field does not count: "dns:" does not match a URI SAN.
        KeyAcl wrongType = KeyAcl.of(Map.of("dns:spiffe://c/ns/a/sa/b", List.of("a/")));
        assertThat(wrongType.grantFor(CA.client("CN=x",
                new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://c/ns/a/sa/b")).certificate())
                .allows(bytes("a/1"))).isFalse();
    }

    @Test
    void prefixesCompareBytesAndTheEmptyPrefixAllowsEverything() {
        KeyAcl.Grant g = KeyAcl.of(Map.of("subject:CN=a", List.of("café/"))).grantFor(CA.client("CN=a").certificate());
        assertThat(g.allows(bytes("café/1"))).isTrue();
        assertThat(g.allows(bytes("cafe\u0301/1"))).as("no Unicode normalisation").isFalse();
        KeyAcl.Grant all = KeyAcl.of(Map.of("subject:CN=a", List.of(""))).grantFor(CA.client("CN=a").certificate());
        assertThat(all.allows(bytes("anything"))).isTrue();
    }

    @Test
    void noCertificateOrNoMatchingIdentityMayUseNoKey() {
        KeyAcl acl = KeyAcl.of(Map.of("subject:CN=a", List.of("")));
        assertThat(acl.grantFor(null).allows(bytes("x"))).isFalse();
        assertThat(acl.grantFor(null).describe()).contains("no client certificate");
        KeyAcl.Grant other = acl.grantFor(CA.client("CN=b").certificate());
        assertThat(other.allows(bytes("x"))).isFalse();
        assertThat(other.describe()).contains("subject:CN=b").contains("matched ACL identities []");
    }

    @Test
    void describeEscapesControlCharacters() {
        KeyAcl.Grant g = KeyAcl.of(Map.of()).grantFor(CA.client("CN=evil\u0007name").certificate());
        assertThat(g.describe()).doesNotContain("\u0007").contains("\\u0007");
    }

    @Test
    void badIdentitiesAreRejectedWithTheReason() {
        assertThatThrownBy(() -> KeyAcl.checkIdentity("orders")).hasMessageContaining("needs a type")
                .hasMessageContaining("brackets");
        assertThatThrownBy(() -> KeyAcl.checkIdentity("subjectcn=orderso=example")).hasMessageContaining("needs a type");
        assertThatThrownBy(() -> KeyAcl.checkIdentity("spiffe://x")).hasMessageContaining("unknown type 'spiffe'");
        assertThatThrownBy(() -> KeyAcl.checkIdentity("subject:not a dn")).hasMessageContaining("not a valid X.500 name");
        assertThatThrownBy(() -> KeyAcl.checkIdentity("ip:example.com")).hasMessageContaining("not an IP address");
        assertThatThrownBy(() -> KeyAcl.checkIdentity("dns:")).hasMessageContaining("empty value");
        assertThatThrownBy(() -> KeyAcl.of(Map.of("dns:a", List.of("x\ny")))).hasMessageContaining("newline");
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
