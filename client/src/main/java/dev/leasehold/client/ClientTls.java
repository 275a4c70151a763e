package dev.leasehold.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS settings of a {@link LeaseholdClient}: whom to trust, and optionally the client's own
 * certificate for mutual TLS. Set them with {@link ClientOptions.Builder#tls(ClientTls)}.
 *
 * <pre>{@code
 * ClientTls tls = ClientTls.builder()
 *         .trustCertificates(Path.of("/etc/leasehold/ca.crt"))                      // the server's CA (PEM)
 *         .keyStore(Path.of("/etc/leasehold/orders.p12"), "secret".toCharArray())  // mTLS, optional
 *         .build();
 * LeaseholdClient client = LeaseholdClient.create(ClientOptions.builder().tls(tls).build(),
 *         "locks.internal:7420");
 * }</pre>
 *
 * <p>The server's certificate must be valid for the host name (or IP address) the client connects
 * to: hostname verification is on by default ({@code SSLParameters} endpoint identification
 * "HTTPS", i.e. the subject alternative names of RFC 2818). Turn it off only for tests.
 * Without trust material the JDK's default trust store (public CAs) is used. Files are read once,
 * by {@link Builder#build()}.
 */
public final class ClientTls {

    private final SSLContext context;
    private final boolean hostnameVerification;

    private ClientTls(SSLContext context, boolean hostnameVerification) {
        this.context = context;
        this.hostnameVerification = hostnameVerification;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The JSSE context sessions are made from. */
    public SSLContext sslContext() {
        return context;
    }

    /** Whether the server's certificate must match the host name connected to (default true). */
    public boolean hostnameVerification() {
        return hostnameVerification;
    }

    @Override
    public String toString() {
        return "ClientTls[protocol=" + context.getProtocol() + ", hostnameVerification=" + hostnameVerification + "]";
    }

    /** Mutable builder of {@link ClientTls}; not thread-safe. */
    public static final class Builder {

        private Path trustPem;
        private Path trustStore;
        private char[] trustStorePassword;
        private Path keyStore;
        private char[] keyStorePassword;
        private Path certificatePem;
        private Path privateKeyPem;
        private SSLContext sslContext;
        private boolean hostnameVerification = true;

        private Builder() {
        }

        /** Trust the CA certificates in this PEM file (e.g. a Kubernetes TLS Secret's {@code ca.crt}). */
        public Builder trustCertificates(Path pemFile) {
            this.trustPem = pemFile;
            return this;
        }

        /** Trust the certificates in this PKCS#12 or JKS trust store. */
        public Builder trustStore(Path file, char[] password) {
            this.trustStore = file;
            this.trustStorePassword = password == null ? null : password.clone();
            return this;
        }

        /**
         * Present the key and certificate chain in this PKCS#12 or JKS key store (mutual TLS). The key's
         * password must be the store's.
         */
        public Builder keyStore(Path file, char[] password) {
            this.keyStore = file;
            this.keyStorePassword = password == null ? null : password.clone();
            return this;
        }

        /**
         * Present this certificate chain (PEM) and unencrypted PKCS#8 private key
         * ({@code -----BEGIN PRIVATE KEY-----}, RSA or EC) for mutual TLS, e.g. a cert-manager Secret's
         * {@code tls.crt} and {@code tls.key} with {@code privateKey.encoding: PKCS8}.
         */
        public Builder keyPem(Path certificateChain, Path privateKey) {
            this.certificatePem = certificateChain;
            this.privateKeyPem = privateKey;
            return this;
        }

        /** Use this context as it is; no other trust or key setting may be given. */
        public Builder sslContext(SSLContext context) {
            this.sslContext = context;
            return this;
        }

        /** Check that the server's certificate names the host connected to; default true. */
        public Builder hostnameVerification(boolean verify) {
            this.hostnameVerification = verify;
            return this;
        }

        /**
         * Reads the files and makes the settings.
         *
         * @throws IllegalArgumentException naming the setting whose file cannot be read or used,
         *         or when settings conflict
         */
        public ClientTls build() {
            boolean anyFile = trustPem != null || trustStore != null || keyStore != null || certificatePem != null
                    || privateKeyPem != null;
            if (sslContext != null) {
                check(!anyFile, "sslContext", "cannot be combined with trust or key files");
                return new ClientTls(sslContext, hostnameVerification);
            }
            check(trustPem == null || trustStore == null, "trustCertificates", "give trustCertificates or trustStore, not both");
            check(keyStore == null || certificatePem == null, "keyStore", "give keyStore or keyPem, not both");
            check((certificatePem == null) == (privateKeyPem == null), "keyPem", "needs both the certificate and the key");
            try {
                TrustManagerFactory tmf = null;
                KeyStore trust = null;
                if (trustPem != null) {
                    trust = emptyStore();
                    int i = 0;
                    for (Certificate c : readCertificates(trustPem, "trustCertificates")) {
                        trust.setCertificateEntry("ca-" + i++, c);
                    }
                } else if (trustStore != null) {
                    trust = load(trustStore, trustStorePassword, "trustStore");
                }
                if (trust != null) {
                    tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                    tmf.init(trust);
                }
                KeyManagerFactory kmf = null;
                if (keyStore != null) {
                    kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                    kmf.init(load(keyStore, keyStorePassword, "keyStore"), keyStorePassword);
                } else if (certificatePem != null) {
                    KeyStore store = emptyStore();
                    char[] none = new char[0];
                    List<Certificate> chain = readCertificates(certificatePem, "keyPem");
                    store.setKeyEntry("client", readPrivateKey(privateKeyPem), none, chain.toArray(Certificate[]::new));
                    kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                    kmf.init(store, none);
                }
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(kmf == null ? null : kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
                return new ClientTls(context, hostnameVerification);
            } catch (GeneralSecurityException e) {
                throw new IllegalArgumentException("Invalid TLS settings: " + e.getMessage(), e);
            }
        }

        private static KeyStore emptyStore() throws GeneralSecurityException {
            KeyStore store = KeyStore.getInstance("PKCS12");
            try {
                store.load(null, null);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return store;
        }

        private static KeyStore load(Path file, char[] password, String setting) {
            try {
                return KeyStore.getInstance(file.toFile(), password); // PKCS#12 or JKS, by content
            } catch (IOException | GeneralSecurityException e) {
                throw new IllegalArgumentException("Invalid " + setting + " = " + file + ": " + e.getMessage(), e);
            }
        }

        private static List<Certificate> readCertificates(Path pem, String setting) {
            try (InputStream in = Files.newInputStream(pem)) {
                Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
                check(!certs.isEmpty(), setting, pem + " holds no certificate");
                return new ArrayList<>(certs);
            } catch (IOException | GeneralSecurityException e) {
                throw new IllegalArgumentException("Invalid " + setting + " = " + pem + ": " + e.getMessage(), e);
            }
        }

        private static PrivateKey readPrivateKey(Path pem) {
            String text;
            try {
                text = Files.readString(pem);
            } catch (IOException e) {
                throw new IllegalArgumentException("Invalid keyPem key = " + pem + ": " + e.getMessage(), e);
            }
            String begin = "-----BEGIN PRIVATE KEY-----";
            int start = text.indexOf(begin);
            int end = text.indexOf("-----END PRIVATE KEY-----");
            check(start >= 0 && end > start, "keyPem", pem + " holds no unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----)");
            byte[] der = Base64.getMimeDecoder().decode(text.substring(start + begin.length(), end));
            for (String algorithm : new String[] {"EC", "RSA", "Ed25519", "RSASSA-PSS"}) {
                try {
                    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
                } catch (GeneralSecurityException e) {
                    // try the next algorithm
                }
            }
            throw new IllegalArgumentException("Invalid keyPem key = " + pem + ": not an RSA, EC or Ed25519 PKCS#8 key");
        }

        private static void check(boolean ok, String setting, String rule) {
            if (!ok) {
                throw new IllegalArgumentException("Invalid " + setting + ": " + rule);
            }
        }
    }
}
