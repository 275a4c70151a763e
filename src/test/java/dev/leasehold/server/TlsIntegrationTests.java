package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestPki;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The protocol port over real TLS sockets: handshakes with trusted and untrusted certificates,
 * mutual TLS required and optional, key ACLs (allow, {@code X 7}, check order), certificate
 * rotation by rewriting the bundle's PEM files, plaintext refused, and start-up failures that
 * name the property. Certificates are made at test time ({@link TestPki}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
class TlsIntegrationTests {

    static final String ORDERS_SUBJECT = "CN=orders,O=Leasehold tests";

    Path dir;
    TestPki ca;
    TestPki rogueCa;
    TestPki.Issued orders;   // ACL by subject: orders/, shared/
    TestPki.Issued billing;  // ACL by URI SAN: billing/
    TestPki.Issued stranger; // trusted, but in no ACL entry
    TestPki.Issued rogue;    // signed by an untrusted CA
    TestServer mtls;         // client-auth need, ACLs, reload-on-update
    TestServer optional;     // client-auth want, no ACLs

    @BeforeAll
    void start() throws IOException {
        dir = Files.createTempDirectory("leasehold-tls");
        ca = TestPki.ca("Leasehold test CA");
        rogueCa = TestPki.ca("Rogue CA");
        orders = ca.client(ORDERS_SUBJECT);
        billing = ca.client("CN=billing-7,O=Leasehold tests",
                new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://test/billing"));
        stranger = ca.client("CN=stranger,O=Leasehold tests");
        rogue = rogueCa.client(ORDERS_SUBJECT); // same subject as orders, wrong CA
        ca.writeCertificate(dir.resolve("ca.crt"));
        ca.server("leasehold").writePem(dir.resolve("tls.crt"), dir.resolve("tls.key"));

        Path config = dir.resolve("tls.yml");
        Files.writeString(config, """
                leasehold:
                  tls:
                    bundle: protocol
                    client-auth: need
                  acl:
                    "[subject:cn=orders, o=Leasehold Tests]": ["orders/", "shared/"]
                    "[uri:spiffe://test/billing]": ["billing/"]
                spring:
                  ssl:
                    bundle:
                      watch:
                        file:
                          quiet-period: 100ms
                      pem:
                        protocol:
                          reload-on-update: true
                          keystore:
                            certificate: file:%1$s/tls.crt
                            private-key: file:%1$s/tls.key
                          truststore:
                            certificate: file:%1$s/ca.crt
                """.formatted(dir));
        mtls = TestServer.start(Map.of("spring.config.additional-location", "file:" + config));
        optional = TestServer.start(pemBundle("want"));
    }

    Map<String, String> pemBundle(String clientAuth) {
        return Map.of("leasehold.tls.bundle", "p",
                "leasehold.tls.client-auth", clientAuth,
                "spring.ssl.bundle.pem.p.keystore.certificate", "file:" + dir.resolve("tls.crt"),
                "spring.ssl.bundle.pem.p.keystore.private-key", "file:" + dir.resolve("tls.key"),
                "spring.ssl.bundle.pem.p.truststore.certificate", "file:" + dir.resolve("ca.crt"));
    }

    @AfterAll
    void stop() {
        if (mtls != null) {
            mtls.close();
        }
        if (optional != null) {
            optional.close();
        }
        TestServer.deleteTree(dir);
    }

    // ---------------------------------------------------------------- handshakes

    @Test
    void trustedClientCertificateCompletesTheHandshake() throws IOException {
        try (SSLSocket s = connect(mtls, ca.sslContext(orders))) {
            assertThat(s.getSession().getProtocol()).startsWith("TLS");
            X509Certificate server = (X509Certificate) s.getSession().getPeerCertificates()[0];
            assertThat(server.getSubjectX500Principal().getName()).contains("CN=leasehold");
            try (RawClient c = new RawClient(s)) {
                assertThat(c.send(new Request.Ping(7)).next()).isEqualTo(new Answer.Pong(7));
            }
        }
    }

    @Test
    void clientThatDoesNotTrustTheServerCertificateFailsTheHandshake() {
        // The client trusts only the rogue CA: the server's certificate is untrusted.
        assertThatThrownBy(() -> connect(mtls, rogueCa.sslContext(orders)).close())
                .isInstanceOf(SSLException.class);
    }

    @Test
    void mutualTlsRequiredRefusesNoCertificateAndUntrustedCertificate() {
        assertRefused(mtls, ca.sslContext(null));
        assertRefused(mtls, ca.sslContext(rogue));
    }

    @Test
    void mutualTlsOptionalAcceptsNoCertificateAndATrustedOneButNotAnUntrustedOne() throws IOException {
        for (TestPki.Issued identity : new TestPki.Issued[] {null, stranger}) {
            try (RawClient c = new RawClient(connect(optional, ca.sslContext(identity)))) {
                // No ACL configured: every client may use every key.
                acquireAndRelease(c, "anything/" + (identity == null ? "anonymous" : "stranger"));
            }
        }
        assertRefused(optional, ca.sslContext(rogue));
    }

    @Test
    void plaintextClientIsRefusedAndLoggedOnce(CapturedOutput output) throws IOException {
        // A nonce whose byte at frame offset 4 is 2 or 3 makes the Ping look like an SSLv2 header
        // announcing a 4 KB record: Netty's TLS handler alone waited for it (campaign, 1 in 128 CLI pings).
        long[] nonces = {1, 2L << 32, 3L << 32, 0x0203_0302_0303_0203L, 7};
        for (long nonce : nonces) {
            try (RawClient c = new RawClient(mtls.port())) {
                c.send(new Request.Ping(nonce));
                assertThat(c.closedByServer(5000)).as("plaintext session (Ping nonce %x) closed", nonce).isTrue();
            }
        }
        Wait.untilAsserted("the server's WARN line for a plaintext client", Duration.ofSeconds(10),
                () -> assertThat(output.getOut()).contains("not a TLS client"));
        assertThat(output.getOut().lines().filter(l -> l.contains("WARN") && l.contains("not a TLS client")))
                .as("one WARN for five plaintext clients").hasSize(1);
    }

    // ---------------------------------------------------------------- ACLs

    @Test
    void aclAllowsTheIdentitysPrefixesBySubjectAndByUriSan() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(orders)))) {
            acquireAndRelease(c, "orders/42");
            acquireAndRelease(c, "shared/cache");
        }
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(billing)))) {
            acquireAndRelease(c, "billing/invoice-1");
        }
    }

    @Test
    void keyOutsideTheAclGetsX7ThenCloseAfterEarlierFramesWereAnswered(CapturedOutput output) throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(orders)))) {
            c.send(new Request.Acquire(0, 5, 11, key("orders/ok")),
                    new Request.Acquire(0, 5, 12, key("billing/\u0001x")),
                    new Request.Ping(13));
            Answer first = c.next();
            assertThat(first).isInstanceOf(Answer.Acquired.class);
            assertThat(c.next()).as("X 7 names the key it refused, escaped")
                    .isEqualTo(new Answer.Error(ErrorCode.FORBIDDEN.code(), "forbidden key \"billing/\\u0001x\""));
            assertThat(c.closedByServer(5000)).isTrue();
            // The grant made before the denial stays: release it on another session.
            try (RawClient d = new RawClient(connect(mtls, ca.sslContext(orders)))) {
                long token = ((Answer.Acquired) first).token();
                assertThat(d.send(new Request.Release(token, key("orders/ok"))).next()).isEqualTo(new Answer.Released(token));
            }
        }
        String warn = output.getOut().lines().filter(l -> l.contains("protocol error 7")).findFirst().orElseThrow();
        assertThat(warn).contains("\"billing/\\u0001x\"")         // the key, escaped
                .contains("subject:CN=orders,O=Leasehold tests")  // who
                .contains("\"orders/\"", "\"shared/\"")           // what it may use
                .doesNotContain("\u0001");
    }

    /** PROTOCOL.md section 11: a Check is subject to the key ACL like every keyed request. */
    @Test
    void aCheckIsCheckedToo() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(billing)))) {
            assertThat(c.send(new Request.Check(1, key("orders/42"))).next())
                    .isEqualTo(new Answer.Error(ErrorCode.FORBIDDEN.code(), "forbidden key \"orders/42\""));
        }
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(orders)))) {
            assertThat(c.send(new Request.Check(1, key("orders/42"))).next()).isEqualTo(new Answer.NotHeld(1));
        }
    }

    /** PROTOCOL.md 16.7: an Observe is checked as an Acquire (an observer sees holders and values). */
    @Test
    void anObserveIsCheckedAsAnAcquire() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(billing)))) {
            assertThat(c.send(new Request.Observe(1, key("orders/watched"))).next())
                    .isEqualTo(new Answer.Error(ErrorCode.FORBIDDEN.code(), "forbidden key \"orders/watched\""));
        }
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(orders)))) {
            assertThat(c.send(new Request.Observe(1, key("orders/watched"))).next())
                    .isEqualTo(new Answer.Event(1, 'F', 0, 0, 0, 0, 0, new byte[0]));
        }
    }

    /** Inspect names the holder's client certificate. */
    @Test
    void theHoldersCertificateSubjectIsRecordedForInspect() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(orders)))) {
            c.send(new Request.Acquire(0, 5, 21, key("orders/inspected")));
            long token = ((Answer.Acquired) c.next()).token();
            dev.leasehold.registry.KeyView v = mtls.bean(dev.leasehold.registry.LockRegistry.class)
                    .inspect(key("orders/inspected"), 1);
            assertThat(v.holder().identity()).isEqualTo("CN=orders,O=Leasehold tests");
            c.send(new Request.Release(token, key("orders/inspected")));
            c.next();
        }
    }

    @Test
    void releaseAndExtendAreCheckedToo() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(billing)))) {
            assertThat(c.send(new Request.Release(1, key("orders/42"))).next())
                    .isEqualTo(new Answer.Error(ErrorCode.FORBIDDEN.code(), "forbidden key \"orders/42\""));
        }
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(billing)))) {
            assertThat(c.send(new Request.Extend(5, 1, key("orders/42"))).next())
                    .isEqualTo(new Answer.Error(ErrorCode.FORBIDDEN.code(), "forbidden key \"orders/42\""));
        }
    }

    @Test
    void trustedClientInNoAclEntryMayPingButUseNoKey() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(stranger)))) {
            assertThat(c.send(new Request.Ping(5)).next()).isEqualTo(new Answer.Pong(5));
            assertThat(c.send(new Request.Acquire(0, 5, 1, key("orders/42"))).next())
                    .isEqualTo(new Answer.Error(ErrorCode.FORBIDDEN.code(), "forbidden key \"orders/42\""));
        }
    }

    @Test
    void badUtf8IsReportedBeforeThePermission() throws IOException {
        try (RawClient c = new RawClient(connect(mtls, ca.sslContext(orders)))) {
            // "billing/" (denied) followed by 0xFF (invalid UTF-8): the UTF-8 check comes first.
            c.sendHex("41 00 05 00 00 00 00 00 00 00 01 62 69 6C 6C 69 6E 67 2F FF 0A");
            Answer.Error x = (Answer.Error) c.next();
            assertThat(x.code()).isEqualTo(ErrorCode.BAD_KEY.code());
        }
    }

    // ---------------------------------------------------------------- rotation

    @Test
    void rotatedCertificateIsUsedByNewSessionsWhileOpenSessionsContinue() throws IOException {
        SSLContext client = ca.sslContext(orders);
        try (SSLSocket before = connect(mtls, client); RawClient open = new RawClient(before)) {
            BigInteger oldSerial = serverSerial(before);
            assertThat(open.send(new Request.Ping(1)).next()).isEqualTo(new Answer.Pong(1));

            TestPki.Issued next = ca.server("leasehold-rotated");
            next.writePem(dir.resolve("tls.crt"), dir.resolve("tls.key"));

            Wait.untilAsserted("the server (port " + mtls.port() + ") to present the rotated certificate", Duration.ofSeconds(20), () -> {
                try (SSLSocket after = connect(mtls, client)) {
                    assertThat(serverSerial(after)).isEqualTo(next.certificate().getSerialNumber())
                            .isNotEqualTo(oldSerial);
                }
            });
            // The session opened before the rotation goes on with its own keys.
            assertThat(open.send(new Request.Ping(2)).next()).isEqualTo(new Answer.Pong(2));
            acquireAndRelease(open, "orders/after-rotation");
        }
    }

    // ---------------------------------------------------------------- start-up

    @Test
    void unknownBundleFailsStartUpNamingTheProperty() {
        assertThatThrownBy(() -> TestServer.start(Map.of("leasehold.tls.bundle", "nope")))
                .satisfies(e -> assertThat(causes(e)).contains("leasehold.tls.bundle").contains("nope"));
    }

    @Test
    void unreadableCertificateFileFailsStartUpNamingTheProperty() {
        Map<String, String> props = new java.util.HashMap<>(pemBundle("none"));
        props.put("spring.ssl.bundle.pem.p.keystore.certificate", "file:" + dir.resolve("missing.crt"));
        assertThatThrownBy(() -> TestServer.start(props))
                .satisfies(e -> assertThat(causes(e)).contains("missing.crt")
                        .containsAnyOf("leasehold.tls.bundle", "spring.ssl.bundle.pem.p"));
    }

    @Test
    void clientCertificatesWithoutTrustMaterialFailStartUp() {
        Map<String, String> props = new java.util.HashMap<>(pemBundle("need"));
        props.remove("spring.ssl.bundle.pem.p.truststore.certificate");
        assertThatThrownBy(() -> TestServer.start(props))
                .satisfies(e -> assertThat(causes(e)).contains("leasehold.tls.client-auth").contains("truststore"));
    }

    @Test
    void aclWithoutClientCertificatesFailsStartUp() {
        Map<String, String> props = new java.util.HashMap<>(pemBundle("none"));
        props.put("leasehold.acl[uri:spiffe://x]", "a/");
        assertThatThrownBy(() -> TestServer.start(props))
                .satisfies(e -> assertThat(causes(e)).contains("leasehold.acl").contains("client-auth"));
    }

    @Test
    void aclIdentityWithoutTypeFailsStartUp() {
        Map<String, String> props = new java.util.HashMap<>(pemBundle("need"));
        props.put("leasehold.acl.orders", "a/");
        assertThatThrownBy(() -> TestServer.start(props))
                .satisfies(e -> assertThat(causes(e)).contains("leasehold.acl").contains("needs a type"));
    }

    // ---------------------------------------------------------------- helpers

    static SSLSocket connect(TestServer server, SSLContext context) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(plain, "localhost", server.port(), true);
        s.setSoTimeout(10_000);
        try {
            s.startHandshake();
        } catch (IOException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /**
     * The server refuses this client's certificate (or its lack of one). With TLS 1.3 the client's
     * handshake may complete before the server has checked it, so the refusal can come on the
     * first read: either way no answer ever comes.
     */
    static void assertRefused(TestServer server, SSLContext context) {
        assertThatThrownBy(() -> {
            try (RawClient c = new RawClient(connect(server, context))) {
                c.send(new Request.Ping(99)).next(5000);
            }
        }).isInstanceOfAny(SSLException.class, IOException.class)
                .satisfies(e -> assertThat(e).isNotInstanceOf(java.net.SocketTimeoutException.class));
    }

    static void acquireAndRelease(RawClient c, String key) throws IOException {
        Answer a = c.send(new Request.Acquire(0, 5, 1, key(key))).next();
        assertThat(a).as("acquire %s", key).isInstanceOf(Answer.Acquired.class);
        long token = ((Answer.Acquired) a).token();
        assertThat(c.send(new Request.Release(token, key(key))).next()).isEqualTo(new Answer.Released(token));
    }

    static BigInteger serverSerial(SSLSocket s) throws IOException {
        return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }

    static byte[] key(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String causes(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" | ");
        }
        return all.toString();
    }
}
