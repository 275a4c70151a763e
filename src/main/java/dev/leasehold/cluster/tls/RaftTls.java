package dev.leasehold.cluster.tls;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.InternalProtocolNegotiators;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.ClientAuth;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslProvider;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.settings.SettingException;

/**
 * Mutual TLS on every Raft connection of this node, from one key (this node's certificate) and
 * one trust (the cluster's CA), both reloadable ({@link #update}).
 *
 * <ul>
 * <li><b>Listening</b>: the Raft port, which also serves Ratis's admin and client services (they
 *     are never given a port of their own, see {@link #serverParameters}), requires a client
 *     certificate that chains to the trust and names a member ({@link PeerTrustManager}); refusals
 *     are counted ({@link PeerRefusals}) before gRPC reads a byte of HTTP/2.
 * <li><b>Dialling</b>: Ratis uses the server TLS config for its connections to the other peers, so
 *     the same certificate is presented as a client: it needs both the {@code serverAuth} and the
 *     {@code clientAuth} extended key usages. gRPC checks the peer's host name against its
 *     {@code raft-address}; the trust manager checks it names a member.
 * <li><b>Rotation</b>: Ratis builds its SSL contexts once; they call the key and trust managers on
 *     each handshake, so {@link #update} makes new connections use the new certificate and CA.
 *     Open connections keep the session they have.
 * </ul>
 */
public final class RaftTls {

    /** The setting the key and trust come from: what a certificate this node cannot use is reported against. */
    public static final String BUNDLE_PROPERTY = "leasehold.cluster.tls.bundle";

    private final String bundle;
    private final String selfId;
    private final PeerIdentities identities;
    private final ReloadingKeyManager keys;
    private final PeerTrustManager trust;
    private final PeerRefusals refusals;
    private final SslContext listening;
    private volatile Map<String, ClusterSettings.Peer> admitted = Map.of();
    private volatile Set<String> refused = Set.of();

    /**
     * @param bundle the name of the SSL bundle the material comes from ({@value #BUNDLE_PROPERTY}), for messages
     * @param settings this node and its peers
     * @param key the bundle's key manager
     * @param trustManager the bundle's trust manager
     * @param leaf the bundle's certificate, checked for usages and this node's name
     * @param refusals where refused connections are counted
     * @throws SettingException naming {@value #BUNDLE_PROPERTY} if the certificate cannot serve this node
     */
    public RaftTls(String bundle, ClusterSettings settings, X509ExtendedKeyManager key,
            X509ExtendedTrustManager trustManager, X509Certificate leaf, PeerRefusals refusals) {
        this.bundle = bundle;
        this.selfId = settings.nodeId();
        this.identities = PeerIdentities.of(settings.peers());
        this.refusals = refusals;
        check(leaf);
        this.keys = new ReloadingKeyManager(key);
        this.trust = new PeerTrustManager(trustManager, identities, refusals);
        try {
            // JDK provider on the listening side: its handshake errors keep our trust manager's
            // exception as their cause, which PeerHandshakes classifies.
            this.listening = GrpcSslContexts.configure(SslContextBuilder.forServer(keys).trustManager(trust)
                    .clientAuth(ClientAuth.REQUIRE), SslProvider.JDK).build();
        } catch (SSLException e) {
            throw new SettingException(BUNDLE_PROPERTY, bundle, e.getMessage(), e);
        }
    }

    /**
     * Members added online (the replicated roster's directory, {@code id → peer}) are
     * members too, and removed ones are not (configured or not): new handshakes accept a
     * certificate naming a member. Called whenever the directory
     * may have changed; cheap when it has not.
     */
    public void admit(Map<String, ClusterSettings.Peer> added, Set<String> removed) {
        if (!added.equals(admitted) || !removed.equals(refused)) {
            admitted = Map.copyOf(added);
            refused = Set.copyOf(removed);
            trust.members(identities.with(admitted, refused));
        }
    }

    /**
     * Refuses a certificate this node cannot use: without the serverAuth and clientAuth usages
     * (when it lists extended key usages at all), or not naming this node as its peers expect.
     */
    void check(X509Certificate leaf) {
        if (leaf == null) {
            throw new SettingException(BUNDLE_PROPERTY, bundle, "the bundle has no key entry (a certificate "
                    + "and private key for node " + selfId + ")");
        }
        List<String> eku;
        try {
            eku = leaf.getExtendedKeyUsage();
        } catch (CertificateParsingException e) {
            throw new SettingException(BUNDLE_PROPERTY, bundle, "unreadable extended key usage: " + e.getMessage(), e);
        }
        if (eku != null && !eku.contains("2.5.29.37.0")) {
            for (String[] usage : new String[][] {{"1.3.6.1.5.5.7.3.1", "serverAuth", "listen for peers"},
                    {"1.3.6.1.5.5.7.3.2", "clientAuth", "dial peers"}}) {
                if (!eku.contains(usage[0])) {
                    throw new SettingException(BUNDLE_PROPERTY, bundle, "certificate "
                            + leaf.getSubjectX500Principal().getName() + " lacks the " + usage[1]
                            + " extended key usage, needed to " + usage[2] + " (the same certificate listens and dials)");
                }
            }
        }
        String named = identities.memberNamedBy(leaf);
        if (!selfId.equals(named)) {
            throw new SettingException(BUNDLE_PROPERTY, bundle, "certificate "
                    + leaf.getSubjectX500Principal().getName() + " (" + PeerIdentities.describe(leaf)
                    + ") does not name node " + selfId + ": its peers expect " + identities.expected(selfId)
                    + " (the host of leasehold.cluster.peers." + selfId + ".raft-address, or its identity)");
        }
    }

    /** New Raft connections use this key and trust from now on (a reloaded bundle); checked first. */
    public void update(X509ExtendedKeyManager key, X509ExtendedTrustManager trustManager, X509Certificate leaf) {
        check(leaf);
        trust.update(trustManager);
        keys.update(key);
    }

    private GrpcTlsConfig config() {
        return new GrpcTlsConfig(keys, trust, true);
    }

    /**
     * The Raft server's parameters: mutual TLS to listen and dial, the same for the admin and
     * client services (which share the Raft port), and the listening side's negotiator replaced
     * by one that counts refusals.
     */
    public Parameters serverParameters() {
        Parameters p = new Parameters();
        GrpcConfigKeys.TLS.setConf(p, config());
        GrpcConfigKeys.Server.setTlsConf(p, config());
        GrpcConfigKeys.Admin.setTlsConf(p, config());
        GrpcConfigKeys.Client.setTlsConf(p, config());
        // gRPC's Internal* negotiator API (public, not stable): a Ratis upgrade that changes it
        // breaks the build or ClusterTlsIntegrationTests, whose refusal counts come through here.
        GrpcConfigKeys.Server.setServicesCustomizer(p, (builder, types) -> builder.protocolNegotiator(
                new PeerHandshakes(InternalProtocolNegotiators.serverTls(listening), refusals)));
        return p;
    }

    /** Parameters for this node's own Raft client (admin calls to itself): the same certificate. */
    public Parameters clientParameters() {
        Parameters p = new Parameters();
        GrpcConfigKeys.TLS.setConf(p, config());
        GrpcConfigKeys.Admin.setTlsConf(p, config());
        GrpcConfigKeys.Client.setTlsConf(p, config());
        return p;
    }

    /** This node's key, presented by the start-up probe (the cluster's {@code PeerProbe}) so TLS peers see no refusal. */
    public X509ExtendedKeyManager keyManager() {
        return keys;
    }

    /** The setting this material comes from, for messages: {@code leasehold.cluster.tls.bundle = <name>}. */
    public String property() {
        return BUNDLE_PROPERTY + " = " + bundle;
    }

    /** Refused connections so far. */
    public PeerRefusals refusals() {
        return refusals;
    }
}
