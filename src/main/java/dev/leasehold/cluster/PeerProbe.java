package dev.leasehold.cluster;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.cluster.tls.RaftTls;

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

    private static final Logger LOG = LoggerFactory.getLogger(PeerProbe.class);

    private PeerProbe() {
    }

    /**
     * Mixed settings fail fast: a TLS node that reaches a plaintext peer, or a plaintext node that
     * reaches a TLS peer, stops here naming the setting, rather than joining a cluster it can
     * never talk to. Peers not up yet are not known and do not stop the start.
     *
     * @param tls this node's cluster TLS, or null for plaintext
     * @throws IllegalStateException naming {@code leasehold.cluster.tls.bundle} on a mismatch
     */
    static void checkPeersSpeakAs(ClusterSettings settings, RaftTls tls) {
        Duration timeout = Duration.ofMillis(Math.max(1000, settings.electionTimeoutMin().toMillis()));
        for (Map.Entry<String, ClusterSettings.Peer> e : settings.peers().entrySet()) {
            if (e.getKey().equals(settings.nodeId())) {
                continue;
            }
            String address = e.getValue().raftAddress();
            Speaks speaks = probe(address, tls == null ? null : tls.keyManager(), timeout);
            if (tls == null && speaks == Speaks.TLS) {
                throw new IllegalStateException("Node " + settings.nodeId() + " has no leasehold.cluster.tls.bundle, "
                        + "but peer " + e.getKey() + " at " + address + " speaks TLS on its Raft port: it would refuse "
                        + "this node. Set leasehold.cluster.tls.bundle on every node of the cluster, or on none");
            }
            if (tls != null && speaks == Speaks.PLAINTEXT) {
                throw new IllegalStateException("Node " + settings.nodeId() + " has " + tls.property()
                        + ", but peer " + e.getKey() + " at " + address + " speaks plaintext on its Raft port: set "
                        + "leasehold.cluster.tls.bundle on every node of the cluster, or on none");
            }
            LOG.debug("Peer {} at {}: {}", e.getKey(), address, speaks);
        }
    }

    /** Probes {@code host:port} presenting {@code key} (or no certificate when null); never throws. */
    static Speaks probe(String hostPort, X509KeyManager key, Duration timeout) {
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon).replace("[", "").replace("]", "");
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        int ms = (int) timeout.toMillis();
        SeesCertificate trust = new SeesCertificate();
        try (Socket raw = new Socket()) {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(key == null ? null : new KeyManager[] {key}, new TrustManager[] {trust}, null);
            raw.connect(new InetSocketAddress(host, port), ms);
            raw.setSoTimeout(ms);
            try (SSLSocket tls = (SSLSocket) context.getSocketFactory().createSocket(raw, host, port, false)) {
                tls.startHandshake();
                return Speaks.TLS;
            } catch (SSLException e) {
                if (trust.seen) {
                    return Speaks.TLS; // it sent a certificate, then refused ours (or none): it speaks TLS
                }
                String m = String.valueOf(e.getMessage());
                return m.contains("Unsupported or unrecognized SSL message") ? Speaks.PLAINTEXT : Speaks.UNKNOWN;
            }
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            return Speaks.UNKNOWN;
        }
    }

    /**
     * Accepts any server and notes that one sent a certificate: the probe decides nothing on
     * trust, the real connection does. One per probe; the handshake runs in the probing thread.
     */
    private static final class SeesCertificate implements X509TrustManager {
        private volatile boolean seen;

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
            throw new UnsupportedOperationException("a probe never accepts connections");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
            seen = true;
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
