package dev.leasehold.config;

import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Collections;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.cluster.tls.PeerIdentities;
import dev.leasehold.cluster.tls.PeerRefusals;
import dev.leasehold.cluster.tls.RaftTls;
import dev.leasehold.settings.SettingException;

/**
 * Mutual TLS between the nodes from {@code leasehold.cluster.tls.bundle}, a Spring SSL bundle
 * (PEM or JKS) like the protocol port's. When the bundle reloads ({@code reload-on-update}), new
 * Raft connections use the new certificate and trust; a reloaded certificate that this node
 * cannot use (wrong usages, not naming it) is refused and the previous one stays.
 */
final class ClusterTlsConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterTlsConfiguration.class);

    private ClusterTlsConfiguration() {
    }

    /** The node's Raft TLS, or null when {@code leasehold.cluster.tls.bundle} is not set. */
    static RaftTls raftTls(LeaseholdProperties.Cluster.ClusterTls tls, ClusterSettings settings, SslBundles bundles,
            PeerRefusals refusals) {
        if (!tls.enabled()) {
            LOG.warn("Raft connections of node {} are plaintext and unauthenticated: anyone who reaches a Raft port "
                    + "can join the cluster. Set leasehold.cluster.tls.bundle (docs/security.md)", settings.nodeId());
            return null;
        }
        // The members' identities first: a problem there is not the bundle's (several nodes on one host)
        PeerIdentities.of(settings.peers());
        String name = tls.bundle();
        RaftTls raftTls;
        SslBundle bundle;
        try {
            bundle = bundles.getBundle(name);
            raftTls = new RaftTls(name, settings, keyManager(bundle, name), trustManager(bundle, name), leaf(bundle),
                    refusals);
        } catch (NoSuchSslBundleException e) {
            throw new SettingException(RaftTls.BUNDLE_PROPERTY, name, "no such SSL bundle; define spring.ssl.bundle.pem."
                    + name + ".* or spring.ssl.bundle.jks." + name + ".* (known: " + bundles.getBundleNames() + ")", e);
        } catch (SettingException | IllegalStateException e) {
            throw e;
        } catch (RuntimeException e) {
            // Bundle files are read lazily: a missing or unreadable file shows up here.
            throw new SettingException(RaftTls.BUNDLE_PROPERTY, name, "cannot use SSL bundle '" + name + "': "
                    + e.getMessage(), e);
        }
        LOG.info("Mutual TLS on Raft connections from SSL bundle '{}': {}", name, TlsConfiguration.describe(bundle));
        bundles.addBundleUpdateHandler(name, updated -> {
            try {
                raftTls.update(keyManager(updated, name), trustManager(updated, name), leaf(updated));
                LOG.info("SSL bundle '{}' reloaded: new Raft connections use {}", name,
                        TlsConfiguration.describe(updated));
            } catch (RuntimeException e) {
                LOG.error("SSL bundle '{}' changed but cannot be used ({}); new Raft connections keep the previous "
                        + "certificate", name, e.getMessage(), e);
            }
        });
        return raftTls;
    }

    private static X509ExtendedKeyManager keyManager(SslBundle bundle, String name) {
        for (KeyManager km : bundle.getManagers().getKeyManagers()) {
            if (km instanceof X509ExtendedKeyManager x) {
                return x;
            }
        }
        throw new SettingException(RaftTls.BUNDLE_PROPERTY, name, "the bundle has no X.509 key");
    }

    private static X509ExtendedTrustManager trustManager(SslBundle bundle, String name) {
        if (bundle.getStores().getTrustStore() == null) {
            // Without its own trust the JDK default would accept any public CA's certificate as a peer.
            throw new SettingException(RaftTls.BUNDLE_PROPERTY, name, "needs trust material (the cluster's CA) in "
                    + "the bundle: spring.ssl.bundle.pem.<name>.truststore.certificate or "
                    + "spring.ssl.bundle.jks.<name>.truststore.location");
        }
        for (TrustManager tm : bundle.getManagers().getTrustManagers()) {
            if (tm instanceof X509ExtendedTrustManager x) {
                return x;
            }
        }
        throw new SettingException(RaftTls.BUNDLE_PROPERTY, name, "the bundle has no X.509 trust");
    }

    /** The certificate of the bundle's first key entry, or null. */
    private static X509Certificate leaf(SslBundle bundle) {
        KeyStore store = bundle.getStores().getKeyStore();
        if (store == null) {
            return null;
        }
        try {
            for (String alias : Collections.list(store.aliases())) {
                Certificate c = store.getCertificate(alias);
                if (store.isKeyEntry(alias) && c instanceof X509Certificate x) {
                    return x;
                }
            }
        } catch (KeyStoreException e) {
            throw new IllegalStateException("unreadable key store: " + e.getMessage(), e);
        }
        return null;
    }
}
