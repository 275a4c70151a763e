package dev.leasehold.cluster;

import org.bouncycastle.asn1.x509.GeneralName;

import dev.leasehold.testing.TestPki;

/**
 * Node certificates for cluster TLS tests: SANs {@code ip:127.0.0.1} (what gRPC checks when
 * dialling 127.0.0.1) and {@code uri:spiffe://leasehold-test/<id>}, the identity each test peer
 * is configured with, so nodes sharing one host are told apart. In memory, no socket.
 */
public final class PeerCerts {

    private PeerCerts() {
    }

    /** The SPIFFE URI that names node {@code id}. */
    public static String uri(String id) {
        return "spiffe://leasehold-test/" + id;
    }

    /** A node certificate from {@code issuer} naming {@code id}, with serverAuth and clientAuth. */
    public static TestPki.Issued nodeCert(TestPki issuer, String id) {
        return issuer.peer(id, new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.uniformResourceIdentifier, uri(id)));
    }
}
