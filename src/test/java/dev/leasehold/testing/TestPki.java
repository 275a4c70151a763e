package dev.leasehold.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import java.net.Socket;
import java.security.Principal;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for TLS tests: EC P-256 keys and certificates made in memory
 * at test time (BouncyCastle, test scope only), written as PEM files or PKCS#12 stores into a
 * temporary directory. No key is ever committed.
 */
public final class TestPki {

    private static final AtomicLong SERIALS = new AtomicLong(System.currentTimeMillis());
    public static final char[] PASSWORD = "changeit".toCharArray();

    private final X500Name name;
    private final KeyPair key;
    private final X509Certificate certificate;

    private TestPki(X500Name name, KeyPair key, X509Certificate certificate) {
        this.name = name;
        this.key = key;
        this.certificate = certificate;
    }

    /** A new self-signed CA. */
    public static TestPki ca(String commonName) {
        try {
            KeyPair key = newKey();
            X500Name name = x500("CN=" + commonName + ",O=Leasehold tests");
            JcaX509v3CertificateBuilder b = builder(name, name, key);
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(key.getPublic()));
            return new TestPki(name, key, sign(b, key.getPrivate()));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public X509Certificate certificate() {
        return certificate;
    }

    /** A server certificate for localhost and 127.0.0.1. */
    public Issued server(String commonName) {
        return issue("CN=" + commonName + ",O=Leasehold tests", true,
                new GeneralName(GeneralName.dNSName, "localhost"), new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
    }

    /**
     * A cluster node's certificate: serverAuth and clientAuth usages (it listens and dials with
     * the same identity) and these SANs.
     */
    public Issued peer(String commonName, GeneralName... sans) {
        return issue("CN=" + commonName + ",O=Leasehold tests",
                new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}, sans);
    }

    /** A server-only certificate (serverAuth usage alone) with these SANs. */
    public Issued serverOnly(String commonName, GeneralName... sans) {
        return issue("CN=" + commonName + ",O=Leasehold tests", new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth},
                sans);
    }

    /** A key manager that always presents {@code identity}, whatever CAs the peer names. */
    public static KeyManager keyManager(Issued identity) {
        return new AlwaysPresent(identity);
    }

    /** A client certificate with this subject and these SANs (e.g. a URI SAN). */
    public Issued client(String subject, GeneralName... sans) {
        return issue(subject, false, sans);
    }

    private Issued issue(String subject, boolean server, GeneralName... sans) {
        return issue(subject, new KeyPurposeId[] {server ? KeyPurposeId.id_kp_serverAuth : KeyPurposeId.id_kp_clientAuth},
                sans);
    }

    private Issued issue(String subject, KeyPurposeId[] usages, GeneralName... sans) {
        try {
            KeyPair k = newKey();
            JcaX509v3CertificateBuilder b = builder(name, x500(subject), k);
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(usages));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate));
            if (sans.length > 0) {
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
            }
            return new Issued(sign(b, key.getPrivate()), k.getPrivate(), this);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes this CA's certificate as PEM (like a TLS Secret's {@code ca.crt}). */
    public Path writeCertificate(Path file) {
        writeAtomically(file, pem(List.of(certificate)));
        return file;
    }

    /** An SSL context that trusts this CA (and presents {@code identity} if not null). */
    public SSLContext sslContext(Issued identity) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", certificate);
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(identity == null ? null : new KeyManager[] {new AlwaysPresent(identity)}, tmf.getTrustManagers(),
                    null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Presents its certificate whatever CAs the server names: the JDK's own key managers would
     * quietly send nothing when the issuer is not among them, and a test of an untrusted
     * certificate must really send one.
     */
    private static final class AlwaysPresent extends X509ExtendedKeyManager {
        private final Issued identity;

        AlwaysPresent(Issued identity) {
            this.identity = identity;
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return "key";
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return "key";
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return new X509Certificate[] {identity.certificate(), identity.issuer().certificate};
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return identity.key();
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return new String[] {"key"};
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return null;
        }
    }

    /** A certificate issued by a {@link TestPki} with its private key. */
    public record Issued(X509Certificate certificate, PrivateKey key, TestPki issuer) {

        /** Writes {@code tls.crt} (certificate then CA) and {@code tls.key} (PKCS#8), each replaced atomically. */
        public void writePem(Path certFile, Path keyFile) {
            writeAtomically(keyFile, pem(List.of(key)));
            writeAtomically(certFile, pem(List.of(certificate, issuer.certificate)));
        }

        /** A PKCS#12 key store with the key and chain, password {@link TestPki#PASSWORD}. */
        public KeyStore keyStore() {
            try {
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                ks.setKeyEntry("key", key, PASSWORD, new Certificate[] {certificate, issuer.certificate});
                return ks;
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException(e);
            }
        }

        public Path writeKeyStore(Path file) {
            try (OutputStream out = Files.newOutputStream(file)) {
                keyStore().store(out, PASSWORD);
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException(e);
            }
            return file;
        }
    }

    /** An RFC 2253 name as the JDK encodes it (most significant RDN first in DER: "CN=a,O=b" puts O first). */
    private static X500Name x500(String rfc2253) {
        return X500Name.getInstance(new javax.security.auth.x500.X500Principal(rfc2253).getEncoded());
    }

    private static KeyPair newKey() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    private static JcaX509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair key) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(SERIALS.incrementAndGet()),
                Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))), subject,
                key.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey)
            throws GeneralSecurityException {
        try {
            ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey);
            return new JcaX509CertificateConverter().getCertificate(b.build(signer));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static String pem(List<Object> objects) {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(text)) {
            for (Object o : objects) {
                w.writeObject(o instanceof PrivateKey k ? new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(k, null)
                        : o);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return text.toString();
    }

    private static void writeAtomically(Path file, String content) {
        try {
            Path tmp = Files.createTempFile(file.getParent(), ".tmp-", ".pem");
            Files.writeString(tmp, content);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** All certificates of a chain, for assertions. */
    public static List<X509Certificate> chain(Certificate[] certs) {
        List<X509Certificate> out = new ArrayList<>();
        for (Certificate c : certs) {
            out.add((X509Certificate) c);
        }
        return out;
    }
}
