package dev.leasehold.spring.boot;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
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
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(LeaseholdClient.class)
@EnableConfigurationProperties(LeaseholdClientProperties.class)
public class LeaseholdClientAutoConfiguration {

    /** The client, closed with the context. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "leasehold.client", name = "servers")
    public LeaseholdClient leaseholdClient(LeaseholdClientProperties properties,
            ObjectProvider<LeaseholdClientOptionsCustomizer> customizers) {
        ClientOptions.Builder b = ClientOptions.builder();
        if (properties.getPoolSize() != null) {
            b.poolSize(properties.getPoolSize());
        }
        if (properties.getConnectTimeout() != null) {
            b.connectTimeout(properties.getConnectTimeout());
        }
        if (properties.getTransportDeadline() != null) {
            b.transportDeadline(properties.getTransportDeadline());
        }
        if (properties.getResponseGrace() != null) {
            b.responseGrace(properties.getResponseGrace());
        }
        if (properties.getMarginFloor() != null) {
            b.marginFloor(properties.getMarginFloor());
        }
        if (properties.getDriftRate() != null) {
            b.driftRate(properties.getDriftRate());
        }
        if (properties.getThreadNamePrefix() != null) {
            b.threadNamePrefix(properties.getThreadNamePrefix());
        }
        LeaseholdClientProperties.Tls tls = properties.getTls();
        if (tls.isEnabled()) {
            ClientTls.Builder t = ClientTls.builder().hostnameVerification(tls.isHostnameVerification());
            if (tls.getTrustCertificates() != null) {
                t.trustCertificates(tls.getTrustCertificates());
            }
            if (tls.getTrustStore() != null) {
                t.trustStore(tls.getTrustStore(), chars(tls.getTrustStorePassword()));
            }
            if (tls.getKeyStore() != null) {
                t.keyStore(tls.getKeyStore(), chars(tls.getKeyStorePassword()));
            }
            if (tls.getCertificate() != null || tls.getPrivateKey() != null) {
                if (tls.getCertificate() == null || tls.getPrivateKey() == null) {
                    throw new IllegalArgumentException(
                            "leasehold.client.tls.certificate and leasehold.client.tls.private-key go together");
                }
                t.keyPem(tls.getCertificate(), tls.getPrivateKey());
            }
            b.tls(t.build());
        }
        customizers.orderedStream().forEach(c -> c.customize(b));
        List<String> servers = properties.getServers();
        return LeaseholdClient.create(b.build(), servers.toArray(String[]::new));
    }

    private static char[] chars(String password) {
        return password == null ? new char[0] : password.toCharArray();
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
