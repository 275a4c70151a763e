package dev.leasehold.spring.boot;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.ClientTls;
import dev.leasehold.client.LeaseholdClient;
import io.micrometer.observation.ObservationRegistry;

/**
 * The {@link LeaseholdClient} bean from {@code leasehold.client.*} (only when
 * {@code leasehold.client.servers} is set, and unless the application has its own), and an
 * {@link AcquireObserver} that records the Micrometer observation {@code leasehold.client.acquire}
 * (low-cardinality {@code api} and {@code outcome}) when an {@link ObservationRegistry} exists.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration"})
@ConditionalOnClass(LeaseholdClient.class)
@EnableConfigurationProperties(LeaseholdClientProperties.class)
public class LeaseholdClientAutoConfiguration {

    /** The client, closed with the context. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = LeaseholdClientProperties.PREFIX, name = "servers")
    public LeaseholdClient leaseholdClient(LeaseholdClientProperties properties,
            ObjectProvider<LeaseholdClientOptionsCustomizer> customizers, ObjectProvider<SslBundles> sslBundles) {
        ClientOptions.Builder b = ClientOptions.builder();
        PropertyMapper map = PropertyMapper.get();
        map.from(properties::getPoolSize).to(b::poolSize);
        map.from(properties::getConnectTimeout).to(b::connectTimeout);
        map.from(properties::getTransportDeadline).to(b::transportDeadline);
        map.from(properties::getResponseGrace).to(b::responseGrace);
        map.from(properties::getMarginFloor).to(b::marginFloor);
        map.from(properties::getDriftRate).to(b::driftRate);
        map.from(properties::getThreadNamePrefix).to(b::threadNamePrefix);
        map.from(properties::getProtocolRevision).to(b::protocolRevision);
        LeaseholdClientProperties.Tls tls = properties.getTls();
        if (tls.isOn()) {
            b.tls(tls(tls, sslBundles));
        }
        customizers.orderedStream().forEach(c -> c.customize(b));
        if (properties.getServers().isEmpty()) {
            throw new InvalidLeaseholdPropertyException(LeaseholdClientProperties.PREFIX + ".servers", "",
                    "it names no server", "Set it to host:port[,host:port...], or remove it (then no Leasehold "
                            + "client is made).", null);
        }
        return LeaseholdClient.create(b.build(), properties.getServers().toArray(String[]::new));
    }

    /** TLS from the bundle or the files (their values were checked when they bound). */
    private static ClientTls tls(LeaseholdClientProperties.Tls tls, ObjectProvider<SslBundles> sslBundles) {
        ClientTls.Builder t = ClientTls.builder().hostnameVerification(tls.isHostnameVerification());
        if (tls.getBundle() != null) {
            return t.sslContext(bundle(tls.getBundle(), sslBundles).createSslContext()).build();
        }
        PropertyMapper map = PropertyMapper.get();
        map.from(tls::getTrustCertificates).to(t::trustCertificates);
        map.from(tls::getTrustStore).to(f -> t.trustStore(f, ClientPropertyChecks.chars(tls.getTrustStorePassword())));
        map.from(tls::getKeyStore).to(f -> t.keyStore(f, ClientPropertyChecks.chars(tls.getKeyStorePassword())));
        map.from(tls::getCertificate).to(c -> t.keyPem(c, tls.getPrivateKey()));
        return t.build();
    }

    private static SslBundle bundle(String name, ObjectProvider<SslBundles> sslBundles) {
        String property = LeaseholdClientProperties.PREFIX + ".tls.bundle";
        SslBundles bundles = sslBundles.getIfAvailable();
        if (bundles == null) {
            throw new InvalidLeaseholdPropertyException(property, name, "this application has no SSL bundles",
                    "Define the bundle under spring.ssl.bundle.pem." + name + " (or .jks." + name
                            + ") with Spring Boot's SSL auto-configuration, or use the leasehold.client.tls file settings.",
                    null);
        }
        try {
            return bundles.getBundle(name);
        } catch (NoSuchSslBundleException e) {
            throw new InvalidLeaseholdPropertyException(property, name, "there is no SSL bundle of that name",
                    "Define it under spring.ssl.bundle.pem." + name + " (or spring.ssl.bundle.jks." + name
                            + "), or correct the name.", e);
        }
    }

    /** Acquires as Micrometer observations. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    static class Observation {

        @Bean
        @ConditionalOnMissingBean
        AcquireObserver leaseholdAcquireObserver(ObservationRegistry registry, LeaseholdClientProperties properties) {
            return new ObservationAcquireObserver(registry, properties.isObserveKeys());
        }
    }
}
