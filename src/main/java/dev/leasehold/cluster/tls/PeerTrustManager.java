package dev.leasehold.cluster.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicReference;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Trust for Raft connections, both ways: the chain must validate against the bundle's trust
 * (delegated, so expiry, path and, when dialling, the host name are checked as usual) <em>and</em>
 * the leaf must name a configured member ({@link PeerIdentities}). A failure throws a
 * {@link PeerRefusedException} with its reason, which the listening side counts with the remote
 * address ({@code PeerHandshakes}); a peer we dialled that fails is counted here. The delegate
 * is replaced when the bundle reloads (a new CA); thread-safe.
 */
final class PeerTrustManager extends X509ExtendedTrustManager {

    private final AtomicReference<X509ExtendedTrustManager> delegate;
    /** Who is a member: the configured peers, then also those added online ({@link #members}). */
    private volatile PeerIdentities identities;
    private final PeerRefusals refusals;

    /**
     * @param initial the bundle's trust manager
     * @param identities who is a member
     * @param refusals where refused peers that this node dialled are counted
     */
    public PeerTrustManager(X509ExtendedTrustManager initial, PeerIdentities identities, PeerRefusals refusals) {
        this.delegate = new AtomicReference<>(initial);
        this.identities = identities;
        this.refusals = refusals;
    }

    /** New handshakes accept the members {@code next} names (members added or removed online). */
    public void members(PeerIdentities next) {
        identities = next;
    }

    /** New handshakes validate against {@code next}. */
    public void update(X509ExtendedTrustManager next) {
        delegate.set(next);
    }

    /** A refused peer certificate, with the reason the listening side counts. */
    public static final class PeerRefusedException extends CertificateException {
        private static final long serialVersionUID = 1L;
        private final PeerRefusals.Reason reason;

        PeerRefusedException(PeerRefusals.Reason reason, String message, Throwable cause) {
            super(message, cause);
            this.reason = reason;
        }

        /** Why the certificate was refused. */
        public PeerRefusals.Reason reason() {
            return reason;
        }
    }

    /** The member a validated chain's leaf names; refuses a chain that names none. */
    String member(X509Certificate[] chain) throws PeerRefusedException {
        X509Certificate leaf = chain[0];
        PeerIdentities identities = this.identities;
        String member = identities.memberNamedBy(leaf);
        if (member == null) {
            throw new PeerRefusedException(PeerRefusals.Reason.NOT_A_MEMBER, "certificate "
                    + leaf.getSubjectX500Principal().getName() + " (" + PeerIdentities.describe(leaf)
                    + ") names no member of " + identities.expected(), null);
        }
        return member;
    }

    private void check(X509Certificate[] chain, Chain validate, boolean dialled, String remote)
            throws CertificateException {
        try {
            if (chain == null || chain.length == 0) {
                throw new PeerRefusedException(PeerRefusals.Reason.NO_CERTIFICATE, "no certificate", null);
            }
            try {
                validate.check(delegate.get());
            } catch (CertificateException e) {
                throw new PeerRefusedException(PeerRefusals.Reason.UNTRUSTED, "certificate "
                        + chain[0].getSubjectX500Principal().getName() + " not trusted: " + e.getMessage(), e);
            }
            member(chain);
        } catch (PeerRefusedException e) {
            if (dialled) {
                refusals.refused(remote, e.reason(), e.getMessage() + " (a peer this node dialled)");
            }
            throw e;
        }
    }

    @FunctionalInterface
    private interface Chain {
        void check(X509ExtendedTrustManager tm) throws CertificateException;
    }

    private static String peer(SSLEngine engine) {
        return engine == null ? "?" : engine.getPeerHost() + ":" + engine.getPeerPort();
    }

    private static String peer(Socket socket) {
        return socket == null ? "?" : String.valueOf(socket.getRemoteSocketAddress());
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        check(chain, tm -> tm.checkClientTrusted(chain, authType, engine), false, peer(engine));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
            throws CertificateException {
        check(chain, tm -> tm.checkServerTrusted(chain, authType, engine), true, peer(engine));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        check(chain, tm -> tm.checkClientTrusted(chain, authType, socket), false, peer(socket));
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
            throws CertificateException {
        check(chain, tm -> tm.checkServerTrusted(chain, authType, socket), true, peer(socket));
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        check(chain, tm -> tm.checkClientTrusted(chain, authType), false, "?");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        check(chain, tm -> tm.checkServerTrusted(chain, authType), true, "?");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return delegate.get().getAcceptedIssuers();
    }
}
