package dev.leasehold.spring.boot;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * {@code leasehold.client.*}: how the application's {@link dev.leasehold.client.LeaseholdClient}
 * reaches the servers. Unset values keep the client's defaults (docs/client.md).
 *
 * <p>Checked when it binds, by the client's own rules: a bad value ends start-up with a report
 * naming the property, its value and the rule ({@link LeaseholdPropertiesFailureAnalyzer}); so does
 * a setting under {@code leasehold.client.*} that does not exist.
 */
@ConfigurationProperties(prefix = LeaseholdClientProperties.PREFIX, ignoreUnknownFields = false)
public class LeaseholdClientProperties implements Validator {

    /** The prefix of these properties. */
    public static final String PREFIX = "leasehold.client";

    /** Server addresses, host:port (port defaults to 7420). No client bean is made without one. */
    private List<String> servers = new ArrayList<>();

    /** Sessions (TCP connections) the client may open; default 2. */
    private Integer poolSize;

    /** TCP connect plus the session's opening, per attempt; default 2s. */
    private Duration connectTimeout;

    /** Deadline of a wait-0 acquire, and of a Ping; default 5s. */
    private Duration transportDeadline;

    /** How long past its deadline a sent acquire waits for its answer; default 2s. */
    private Duration responseGrace;

    /** Smallest safety margin taken off a ticket's validity; default 50ms. */
    private Duration marginFloor;

    /** Assumed clock-rate drift between client and server (0.01 = 1%); default 0.01. */
    private Double driftRate;

    /** Prefix of the client's thread names; default leasehold-client-N. */
    private String threadNamePrefix;

    /**
     * Protocol revision the client speaks: auto (ask each server with a Hello and speak 1.4 where
     * it answers, 1.3 frames where not), 1.3 (never send a Hello or a 1.4 frame) or 1.4; default auto.
     */
    private String protocolRevision;

    /** Record the lock key as a high-cardinality value of the acquire observation; default false. */
    private boolean observeKeys;

    private final Tls tls = new Tls();

    /** {@code leasehold.client.tls.*}: TLS to the servers. */
    public static class Tls {

        /** Speak TLS to the servers; default false (true when bundle is set). */
        private boolean enabled;

        /**
         * Name of a Spring SSL bundle (spring.ssl.bundle.*) holding the trust material and, for
         * mutual TLS, the client key; turns TLS on. Instead of the file settings below.
         */
        private String bundle;

        /** PEM file of CA certificates to trust (instead of the JDK's trust store). */
        private Path trustCertificates;

        /** PKCS#12 trust store to trust (instead of the JDK's trust store). */
        private Path trustStore;

        /** Password of the trust store. */
        private String trustStorePassword;

        /** PKCS#12 key store with the client's certificate and key, for mutual TLS. */
        private Path keyStore;

        /** Password of the key store. */
        private String keyStorePassword;

        /** PEM certificate chain of the client, for mutual TLS (with private-key). */
        private Path certificate;

        /** PEM (PKCS#8) private key of the client, for mutual TLS (with certificate). */
        private Path privateKey;

        /** Check that the server's certificate names the host connected to; default true. */
        private boolean hostnameVerification = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** True when TLS is on: enabled, or a bundle named. */
        boolean isOn() {
            return enabled || bundle != null;
        }

        public String getBundle() {
            return bundle;
        }

        public void setBundle(String bundle) {
            this.bundle = bundle;
        }

        public Path getTrustCertificates() {
            return trustCertificates;
        }

        public void setTrustCertificates(Path trustCertificates) {
            this.trustCertificates = trustCertificates;
        }

        public Path getTrustStore() {
            return trustStore;
        }

        public void setTrustStore(Path trustStore) {
            this.trustStore = trustStore;
        }

        public String getTrustStorePassword() {
            return trustStorePassword;
        }

        public void setTrustStorePassword(String trustStorePassword) {
            this.trustStorePassword = trustStorePassword;
        }

        public Path getKeyStore() {
            return keyStore;
        }

        public void setKeyStore(Path keyStore) {
            this.keyStore = keyStore;
        }

        public String getKeyStorePassword() {
            return keyStorePassword;
        }

        public void setKeyStorePassword(String keyStorePassword) {
            this.keyStorePassword = keyStorePassword;
        }

        public Path getCertificate() {
            return certificate;
        }

        public void setCertificate(Path certificate) {
            this.certificate = certificate;
        }

        public Path getPrivateKey() {
            return privateKey;
        }

        public void setPrivateKey(Path privateKey) {
            this.privateKey = privateKey;
        }

        public boolean isHostnameVerification() {
            return hostnameVerification;
        }

        public void setHostnameVerification(boolean hostnameVerification) {
            this.hostnameVerification = hostnameVerification;
        }
    }

    public List<String> getServers() {
        return servers;
    }

    public void setServers(List<String> servers) {
        this.servers = servers;
    }

    public Integer getPoolSize() {
        return poolSize;
    }

    public void setPoolSize(Integer poolSize) {
        this.poolSize = poolSize;
    }

    public Duration getConnectTimeout() {
        return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
    }

    public Duration getTransportDeadline() {
        return transportDeadline;
    }

    public void setTransportDeadline(Duration transportDeadline) {
        this.transportDeadline = transportDeadline;
    }

    public Duration getResponseGrace() {
        return responseGrace;
    }

    public void setResponseGrace(Duration responseGrace) {
        this.responseGrace = responseGrace;
    }

    public Duration getMarginFloor() {
        return marginFloor;
    }

    public void setMarginFloor(Duration marginFloor) {
        this.marginFloor = marginFloor;
    }

    public Double getDriftRate() {
        return driftRate;
    }

    public void setDriftRate(Double driftRate) {
        this.driftRate = driftRate;
    }

    public String getProtocolRevision() {
        return protocolRevision;
    }

    public void setProtocolRevision(String protocolRevision) {
        this.protocolRevision = protocolRevision;
    }

    public String getThreadNamePrefix() {
        return threadNamePrefix;
    }

    public void setThreadNamePrefix(String threadNamePrefix) {
        this.threadNamePrefix = threadNamePrefix;
    }

    public boolean isObserveKeys() {
        return observeKeys;
    }

    public void setObserveKeys(boolean observeKeys) {
        this.observeKeys = observeKeys;
    }

    public Tls getTls() {
        return tls;
    }

    @Override
    public boolean supports(Class<?> type) {
        return LeaseholdClientProperties.class.isAssignableFrom(type);
    }

    /** Checks every setting that is set (Spring Boot calls this when the properties bind). */
    @Override
    public void validate(Object target, Errors errors) {
        ClientPropertyChecks.check((LeaseholdClientProperties) target, errors);
    }
}
