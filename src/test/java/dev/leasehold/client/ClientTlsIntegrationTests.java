package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.bouncycastle.asn1.x509.GeneralName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.TestInstance;

import dev.leasehold.testing.TestPki;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The JDK-only client over TLS and mutual TLS against the real server: trust from a PEM file,
 * client identity from a PKCS#12 store or PEM files, hostname verification, an untrusted server,
 * a key outside the ACL. Also measures (prints, does not assert) what TLS costs an uncontended
 * acquire + release and a session set-up, against plaintext
 * ({@code target/failsafe-reports/*ClientTlsIntegrationTests-output.txt, with -Dleasehold.measure=true}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientTlsIntegrationTests {

    Path dir;
    TestPki ca;
    TestPki rogueCa;
    Path caPem;
    Path appP12;
    TestServer plain;
    TestServer tls;   // server certificate only
    TestServer mtls;  // client-auth need, ACL: uri:spiffe://test/app -> app/

    @BeforeAll
    void start() throws IOException {
        dir = Files.createTempDirectory("leasehold-client-tls");
        ca = TestPki.ca("Leasehold client test CA");
        rogueCa = TestPki.ca("Rogue CA");
        caPem = ca.writeCertificate(dir.resolve("ca.crt"));
        ca.server("leasehold").writePem(dir.resolve("tls.crt"), dir.resolve("tls.key"));
        TestPki.Issued app = ca.client("CN=app,O=Leasehold tests",
                new GeneralName(GeneralName.uniformResourceIdentifier, "spiffe://test/app"));
        appP12 = app.writeKeyStore(dir.resolve("app.p12"));
        app.writePem(dir.resolve("app.crt"), dir.resolve("app.key"));

        plain = TestServer.start();
        Map<String, String> t = new HashMap<>(bundle("none"));
        t.put("leasehold.address", "0.0.0.0"); // reached as 127.0.0.2 too (hostname verification), not only 127.0.0.1
        tls = TestServer.start(t);
        Map<String, String> m = new HashMap<>(bundle("need"));
        m.put("leasehold.acl[uri:spiffe://test/app]", "app/");
        mtls = TestServer.start(m);
    }

    Map<String, String> bundle(String clientAuth) {
        return Map.of("leasehold.tls.bundle", "p",
                "leasehold.tls.client-auth", clientAuth,
                "spring.ssl.bundle.pem.p.keystore.certificate", "file:" + dir.resolve("tls.crt"),
                "spring.ssl.bundle.pem.p.keystore.private-key", "file:" + dir.resolve("tls.key"),
                "spring.ssl.bundle.pem.p.truststore.certificate", "file:" + caPem);
    }

    @AfterAll
    void stop() {
        for (TestServer s : new TestServer[] {plain, tls, mtls}) {
            if (s != null) {
                s.close();
            }
        }
        TestServer.deleteTree(dir);
    }

    @Test
    void trustFromPemAcquiresAndReleasesOverTls() {
        try (LeaseholdClient client = client(tls, ClientTls.builder().trustCertificates(caPem).build())) {
            acquireRelease(client, "orders/1");
        }
    }

    @Test
    void mutualTlsWithAKeyStoreOrWithPemFiles() {
        ClientTls fromStore = ClientTls.builder().trustCertificates(caPem).keyStore(appP12, TestPki.PASSWORD).build();
        ClientTls fromPem = ClientTls.builder().trustCertificates(caPem)
                .keyPem(dir.resolve("app.crt"), dir.resolve("app.key")).build();
        for (ClientTls t : List.of(fromStore, fromPem)) {
            try (LeaseholdClient client = client(mtls, t)) {
                acquireRelease(client, "app/job-1");
            }
        }
    }

    @Test
    void withoutAClientCertificateAMutualTlsServerIsUnavailable() {
        try (LeaseholdClient client = LeaseholdClient.create(failFast(ClientTls.builder().trustCertificates(caPem).build()),
                "127.0.0.1:" + mtls.port())) {
            assertThat(client.acquire("app/x", 0, 5)).isInstanceOf(AcquireOutcome.Unavailable.class);
        }
    }

    @Test
    void aKeyOutsideTheAclIsDefinitivelyForbiddenAndTheOtherRequestsOnItsSessionKeepSection9() throws Exception {
        ClientTls t = ClientTls.builder().trustCertificates(caPem).keyStore(appP12, TestPki.PASSWORD).build();
        try (LeaseholdClient client = client(mtls, t)) {
            // X 7 names the key: that Acquire is Forbidden, a definitive refusal.
            assertThat(client.acquire("billing/x", 0, 5)).isInstanceOfSatisfying(AcquireOutcome.Forbidden.class,
                    f -> assertThat(f.reason()).contains("error 7").contains("forbidden key \"billing/x\""))
                    .matches(AcquireOutcome::isDefinitiveRefusal);
            acquireRelease(client, "app/still-fine"); // on a new session
        }
        // Pipelined on one session: an Acquire queued on a permitted key, then the forbidden one.
        // The X 7 closes the session: the first is Indeterminate (it was executed: queued), the
        // second Forbidden.
        try (LeaseholdClient holder = client(mtls, t); LeaseholdClient client = client(mtls, t)) { // one session each
            Ticket held = ((AcquireOutcome.Acquired) holder.acquire("app/busy", 0, 30)).ticket();
            java.util.concurrent.CompletableFuture<AcquireOutcome> queued = client.acquireAsync("app/busy", 20, 5);
            // The order on the one session is what is tested: the queued Acquire must reach the server first.
            Wait.until("the Acquire of app/busy queued on the server (port " + mtls.port() + ")", Duration.ofSeconds(10),
                    () -> mtls.bean(dev.leasehold.registry.LockRegistry.class).waiters(), n -> n == 1);
            assertThat(client.acquire("billing/y", 0, 5)).isInstanceOf(AcquireOutcome.Forbidden.class);
            assertThat(queued.get(10, java.util.concurrent.TimeUnit.SECONDS))
                    .isInstanceOfSatisfying(AcquireOutcome.Indeterminate.class,
                            i -> assertThat(i.reason()).contains("error 7"));
            held.release();
        }
    }

    @Test
    void untrustedServerCertificateMakesTheServerUnavailable() {
        try (LeaseholdClient client = LeaseholdClient.create(failFast(ClientTls.builder().trustCertificates(
                rogueCa.writeCertificate(dir.resolve("rogue.crt"))).build()), "127.0.0.1:" + tls.port())) {
            assertThat(client.acquire("orders/1", 0, 5)).isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                    u -> assertThat(u.reason()).contains("TLS handshake"));
        }
    }

    @Test
    void hostnameVerificationIsOnByDefault() {
        // The server certificate names localhost and 127.0.0.1, not 127.0.0.2 (also loopback).
        InetSocketAddress wrongName = new InetSocketAddress("127.0.0.2", tls.port());
        try (LeaseholdClient client = LeaseholdClient.create(failFast(ClientTls.builder().trustCertificates(caPem)
                .build()), List.of(wrongName))) {
            assertThat(client.acquire("orders/1", 0, 5)).isInstanceOf(AcquireOutcome.Unavailable.class);
        }
        try (LeaseholdClient client = LeaseholdClient.create(options(ClientTls.builder().trustCertificates(caPem)
                .hostnameVerification(false).build()), List.of(wrongName))) {
            acquireRelease(client, "orders/1");
        }
        try (LeaseholdClient client = LeaseholdClient.create(options(ClientTls.builder().trustCertificates(caPem)
                .build()), "localhost:" + tls.port())) {
            acquireRelease(client, "orders/1");
        }
    }

    @Test
    void badClientTlsSettingsNameTheSetting() {
        assertThatThrownBy(() -> ClientTls.builder().trustCertificates(dir.resolve("missing.crt")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trustCertificates");
        assertThatThrownBy(() -> ClientTls.builder().keyStore(appP12, "wrong".toCharArray()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keyStore");
        assertThatThrownBy(() -> ClientTls.builder().keyPem(dir.resolve("app.crt"), dir.resolve("app.crt")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PKCS#8");
        assertThatThrownBy(() -> ClientTls.builder().keyPem(dir.resolve("app.crt"), null).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keyPem");
    }

    // ---------------------------------------------------------------- cost of TLS

    /** A measurement (prints, asserts nothing of time): only with {@code -Dleasehold.measure=true}. */
    @Test
    @EnabledIfSystemProperty(named = "leasehold.measure", matches = "true")
    void measureTheCostOfTls() throws IOException {
        ClientTls serverAuth = ClientTls.builder().trustCertificates(caPem).build();
        ClientTls mutual = ClientTls.builder().trustCertificates(caPem).keyStore(appP12, TestPki.PASSWORD).build();
        int warmup = 1_500;
        int rounds = 1_000;
        int blocks = 3;
        try (LeaseholdClient p = client(plain, null); LeaseholdClient t = client(tls, serverAuth);
                LeaseholdClient m = client(mtls, mutual)) {
            for (int i = 0; i < warmup; i++) {
                acquireRelease(p, "app/warm");
                acquireRelease(t, "app/warm");
                acquireRelease(m, "app/warm");
            }
            long[][] samples = new long[3][rounds * blocks];
            for (int b = 0; b < blocks; b++) { // interleaved blocks, so drift hits all three alike
                LeaseholdClient[] order = {p, t, m};
                for (int c = 0; c < 3; c++) {
                    for (int i = 0; i < rounds; i++) {
                        long t0 = System.nanoTime();
                        acquireRelease(order[c], "app/measure");
                        samples[c][b * rounds + i] = System.nanoTime() - t0;
                    }
                }
            }
            long[][] setup = new long[3][20];
            for (int i = 0; i < 20; i++) {
                setup[0][i] = firstPing(plain, null);
                setup[1][i] = firstPing(tls, serverAuth);
                setup[2][i] = firstPing(mtls, mutual);
            }
            String report = String.join("\n",
                    "Cost of TLS, loopback, 1 session, uncontended acquire(wait 0) + release(), " + rounds * blocks
                            + " rounds each after " + warmup + " warm-up (microseconds: median / p90 / p99 / mean)",
                    "  plaintext                     " + stats(samples[0]),
                    "  TLS (server certificate)      " + stats(samples[1]),
                    "  mTLS (client cert + key ACL)  " + stats(samples[2]),
                    "Session set-up: new client, connect + handshake + opening ping, 20 each (same units)",
                    "  plaintext                     " + stats(setup[0]),
                    "  TLS                           " + stats(setup[1]),
                    "  mTLS                          " + stats(setup[2]),
                    "  (TLS protocol negotiated: " + negotiated() + ")");
            System.out.println(report);
        }
    }

    private long firstPing(TestServer server, ClientTls t) throws IOException {
        try (LeaseholdClient c = client(server, t)) {
            long t0 = System.nanoTime();
            c.ping();
            return System.nanoTime() - t0;
        }
    }

    private String negotiated() {
        try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ca.sslContext(null).getSocketFactory()
                .createSocket("127.0.0.1", tls.port())) {
            s.startHandshake();
            return s.getSession().getProtocol() + " " + s.getSession().getCipherSuite();
        } catch (IOException e) {
            return "unknown (" + e + ")";
        }
    }

    // ---------------------------------------------------------------- helpers

    static ClientOptions options(ClientTls t) {
        // Generous: a first TLS handshake on a loaded 2-core CI machine can take over a second.
        return ClientOptions.builder().poolSize(1).connectTimeout(Duration.ofSeconds(10)).transportDeadline(
                Duration.ofSeconds(20)).tls(t).build();
    }

    /** Short deadlines for the cases that must fail: they end in Unavailable at the transport deadline. */
    static ClientOptions failFast(ClientTls t) {
        return ClientOptions.builder().poolSize(1).connectTimeout(Duration.ofSeconds(1)).transportDeadline(
                Duration.ofSeconds(1)).tls(t).build();
    }

    static LeaseholdClient client(TestServer server, ClientTls t) {
        return LeaseholdClient.create(options(t), "127.0.0.1:" + server.port());
    }

    static void acquireRelease(LeaseholdClient client, String key) {
        AcquireOutcome o = client.acquire(key, 0, 10);
        assertThat(o).as("acquire %s", key).isInstanceOf(AcquireOutcome.Acquired.class);
        assertThat(((AcquireOutcome.Acquired) o).ticket().release()).isEqualTo(ReleaseOutcome.RELEASED);
    }

    static String stats(long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        double mean = Arrays.stream(s).average().orElse(0);
        return String.format("%8.1f / %8.1f / %8.1f / %8.1f", s[s.length / 2] / 1e3, s[s.length * 9 / 10] / 1e3,
                s[s.length * 99 / 100] / 1e3, mean / 1e3);
    }
}
