package dev.leasehold.config;

import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Collections;
import java.util.Locale;

import javax.net.ssl.SSLException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.server.KeyAcl;
import dev.leasehold.server.ServerSecurity;
import dev.leasehold.server.ServerTls;
import dev.leasehold.settings.SettingException;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;

/**
 * TLS and key ACLs of the protocol port, from {@code leasehold.tls.*} and {@code leasehold.acl}.
 * The certificate comes from a Spring SSL bundle; when the bundle reloads (its
 * {@code reload-on-update}), the server's TLS context is rebuilt for new sessions.
 */
@Configuration(proxyBeanMethods = false)
public class TlsConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(TlsConfiguration.class);

    /** The setting that names the protocol port's SSL bundle. */
    private static final String BUNDLE = "leasehold.tls.bundle";

    @Bean
    ServerSecurity leaseholdServerSecurity(LeaseholdProperties props, SslBundles bundles) {
        KeyAcl acl = props.acl().isEmpty() ? null : KeyAcl.of(props.acl());
        LeaseholdProperties.Tls tls = props.tls();
        if (!tls.enabled()) {
            return new ServerSecurity(null, acl);
        }
        String name = tls.bundle();
        SslBundle bundle;
        SslContext initial;
        try {
            bundle = bundles.getBundle(name);
            checkTrustMaterial(bundle, tls.clientAuth(), name);
            initial = context(bundle, tls.clientAuth(), name);
        } catch (NoSuchSslBundleException e) {
            throw new SettingException(BUNDLE, name, "no such SSL bundle; define "
                    + "spring.ssl.bundle.pem." + name + ".* or spring.ssl.bundle.jks." + name + ".* (known: "
                    + bundles.getBundleNames() + ")", e);
        } catch (SettingException e) {
            throw e;
        } catch (RuntimeException e) {
            // Files are read lazily, when the managers are first asked for: a missing or unreadable
            // file shows up here.
            throw new SettingException(BUNDLE, name, unusable(name, e), e);
        }
        ServerTls serverTls = new ServerTls(initial);
        LOG.info("TLS on the protocol port from SSL bundle '{}': {}; client certificates: {}", name,
                describe(bundle), tls.clientAuth().name().toLowerCase(Locale.ROOT));
        bundles.addBundleUpdateHandler(name, updated -> {
            try {
                serverTls.update(context(updated, tls.clientAuth(), name));
                LOG.info("SSL bundle '{}' reloaded: new sessions use {}", name, describe(updated));
            } catch (RuntimeException e) {
                LOG.error("SSL bundle '{}' changed but cannot be used ({}); new sessions keep the previous "
                        + "certificate", name, e.getMessage(), e);
            }
        });
        return new ServerSecurity(serverTls, acl);
    }

    /** Client certificates need the bundle's own trust material: the JDK default would trust every public CA. */
    static void checkTrustMaterial(SslBundle bundle, LeaseholdProperties.ClientAuth clientAuth, String name) {
        if (clientAuth != LeaseholdProperties.ClientAuth.NONE && bundle.getStores().getTrustStore() == null) {
            throw new SettingException("leasehold.tls.client-auth", clientAuth.name().toLowerCase(Locale.ROOT),
                    "needs trust material in SSL bundle '" + name + "' (spring.ssl.bundle.pem." + name
                            + ".truststore.certificate or spring.ssl.bundle.jks." + name
                            + ".truststore.location) to check client certificates against");
        }
    }

    /** Why bundle {@code name} cannot serve: what the TLS library or a lazily read file said. */
    private static String unusable(String name, Exception e) {
        return "cannot use SSL bundle '" + name + "' (spring.ssl.bundle.*." + name + "): " + e.getMessage();
    }

    /** A Netty server context from the bundle's key and trust managers and its protocols and ciphers. */
    static SslContext context(SslBundle bundle, LeaseholdProperties.ClientAuth clientAuth, String name) {
        try {
            SslContextBuilder builder = SslContextBuilder.forServer(bundle.getManagers().getKeyManagerFactory());
            if (clientAuth != LeaseholdProperties.ClientAuth.NONE) {
                checkTrustMaterial(bundle, clientAuth, name);
                builder.trustManager(bundle.getManagers().getTrustManagerFactory())
                        .clientAuth(clientAuth == LeaseholdProperties.ClientAuth.NEED ? ClientAuth.REQUIRE
                                : ClientAuth.OPTIONAL);
            }
            SslOptions options = bundle.getOptions();
            if (options.getEnabledProtocols() != null) {
                builder.protocols(options.getEnabledProtocols());
            }
            if (options.getCiphers() != null) {
                builder.ciphers(Arrays.asList(options.getCiphers()));
            }
            return builder.build();
        } catch (SSLException e) {
            // Worded as the start-up path words any other unusable bundle: it passes this one through as it is.
            throw new SettingException(BUNDLE, name, unusable(name, e), e);
        }
    }

    /** Subject, serial and expiry of the bundle's first key entry, for the log. */
    static String describe(SslBundle bundle) {
        KeyStore store = bundle.getStores().getKeyStore();
        if (store == null) {
            return "no key store";
        }
        try {
            for (String alias : Collections.list(store.aliases())) {
                Certificate c = store.getCertificate(alias);
                if (store.isKeyEntry(alias) && c instanceof X509Certificate x) {
                    return "certificate " + x.getSubjectX500Principal().getName() + " (serial "
                            + x.getSerialNumber().toString(16) + ", valid until " + x.getNotAfter().toInstant() + ")";
                }
            }
        } catch (KeyStoreException e) {
            return "unreadable key store: " + e.getMessage();
        }
        return "no key entry";
    }
}
