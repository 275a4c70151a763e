package dev.leasehold.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

/**
 * Learns whether a peer's Raft port speaks TLS, before this node joins: a TLS node facing a
 * plaintext peer (or the reverse) would otherwise half-work, retrying connections that can never
 * succeed. One TLS handshake attempt: a peer that sends a certificate speaks TLS; one that answers
 * the ClientHello with bytes that are no TLS record (a plaintext gRPC server sends its HTTP/2
 * SETTINGS at once) speaks plaintext; one that cannot be reached or says nothing is not known
 * (a peer not yet started). Blocking, at start-up only, bounded by the timeout.
 */
final class PeerProbe {

    /** What a peer's Raft port speaks. */
    enum Speaks { TLS, PLAINTEXT, UNKNOWN }

    private PeerProbe() {
    }

    /** A client context that presents {@code key} (or nothing) and accepts any server certificate. */
    static SSLContext context(X509KeyManager key) {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(key == null ? null : new KeyManager[] {key}, new TrustManager[] {new SeesCertificate()}, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Probes {@code host:port}; never throws. */
    static Speaks probe(String hostPort, SSLContext context, Duration timeout) {
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        int ms = (int) timeout.toMillis();
        try (Socket raw = new Socket()) {
            raw.connect(new InetSocketAddress(host, port), ms);
            raw.setSoTimeout(ms);
            SeesCertificate.seen.set(false);
            try (SSLSocket tls = (SSLSocket) context.getSocketFactory().createSocket(raw, host, port, false)) {
                tls.startHandshake();
                return Speaks.TLS;
            } catch (SSLException e) {
                if (SeesCertificate.seen.get()) {
                    return Speaks.TLS; // it sent a certificate, then refused ours (or none): it speaks TLS
                }
                String m = String.valueOf(e.getMessage());
                return m.contains("Unsupported or unrecognized SSL message") ? Speaks.PLAINTEXT : Speaks.UNKNOWN;
            }
        } catch (IOException | RuntimeException e) {
            return Speaks.UNKNOWN;
        } finally {
            SeesCertificate.seen.remove();
        }
    }

    /** Accepts any server and notes that one sent a certificate (the probe decides nothing on trust). */
    private static final class SeesCertificate implements X509TrustManager {
        static final ThreadLocalFlag seen = new ThreadLocalFlag();

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
            seen.set(true);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }

    /** A per-thread flag: the handshake runs in the probing thread. */
    private static final class ThreadLocalFlag {
        private final ThreadLocal<Boolean> value = ThreadLocal.withInitial(() -> false);

        void set(boolean v) {
            value.set(v);
        }

        boolean get() {
            return value.get();
        }

        void remove() {
            value.remove();
        }
    }
}
