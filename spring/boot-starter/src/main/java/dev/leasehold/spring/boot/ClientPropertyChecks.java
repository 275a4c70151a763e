package dev.leasehold.spring.boot;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.springframework.validation.Errors;

import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.ClientTls;
import dev.leasehold.client.LeaseholdClient;

/**
 * The checks of {@code leasehold.client.*} made when it binds. Each value is put, alone, through
 * the client's own rule ({@link LeaseholdClient#serverAddress}, {@link ClientOptions.Builder#build},
 * {@link ClientTls.Builder#build}), so the ranges are written once, in the client; what a rule
 * refuses is reported against the property that holds the value.
 */
final class ClientPropertyChecks {

    private ClientPropertyChecks() {
    }

    static void check(LeaseholdClientProperties p, Errors errors) {
        List<String> servers = p.getServers();
        for (int i = 0; servers != null && i < servers.size(); i++) {
            try {
                LeaseholdClient.serverAddress(servers.get(i));
            } catch (IllegalArgumentException e) {
                errors.rejectValue("servers[" + i + "]", "invalid", e.getMessage());
            }
        }
        option(errors, "poolSize", p.getPoolSize(), ClientOptions.Builder::poolSize);
        option(errors, "connectTimeout", p.getConnectTimeout(), ClientOptions.Builder::connectTimeout);
        option(errors, "transportDeadline", p.getTransportDeadline(), ClientOptions.Builder::transportDeadline);
        option(errors, "responseGrace", p.getResponseGrace(), ClientOptions.Builder::responseGrace);
        option(errors, "marginFloor", p.getMarginFloor(), ClientOptions.Builder::marginFloor);
        option(errors, "driftRate", p.getDriftRate(), ClientOptions.Builder::driftRate);
        option(errors, "threadNamePrefix", p.getThreadNamePrefix(), ClientOptions.Builder::threadNamePrefix);
        option(errors, "protocolRevision", p.getProtocolRevision(), ClientOptions.Builder::protocolRevision);
        LeaseholdClientProperties.Tls tls = p.getTls();
        if (tls.isOn()) {
            checkTls(tls, errors);
        }
    }

    private static void checkTls(LeaseholdClientProperties.Tls tls, Errors errors) {
        if (tls.getBundle() != null) {
            if (tls.getBundle().isBlank()) {
                errors.rejectValue("tls.bundle", "invalid", "must name a spring.ssl.bundle (or be left unset)");
            } else if (tls.getTrustCertificates() != null || tls.getTrustStore() != null || tls.getKeyStore() != null
                    || tls.getCertificate() != null || tls.getPrivateKey() != null) {
                errors.rejectValue("tls.bundle", "invalid", "give either an SSL bundle or the trust-certificates, "
                        + "trust-store, key-store, certificate and private-key files, not both");
            }
            return;
        }
        if (tls.getTrustCertificates() != null && tls.getTrustStore() != null) {
            errors.rejectValue("tls.trustStore", "invalid", "give trust-certificates or trust-store, not both");
        }
        if (tls.getKeyStore() != null && (tls.getCertificate() != null || tls.getPrivateKey() != null)) {
            errors.rejectValue("tls.keyStore", "invalid",
                    "give key-store or certificate with private-key, not both");
        }
        if ((tls.getCertificate() == null) != (tls.getPrivateKey() == null)) {
            errors.rejectValue(tls.getCertificate() == null ? "tls.certificate" : "tls.privateKey", "invalid",
                    "leasehold.client.tls.certificate and leasehold.client.tls.private-key go together");
        }
        file(errors, "tls.trustCertificates", tls.getTrustCertificates(), b -> b.trustCertificates(tls.getTrustCertificates()));
        file(errors, "tls.trustStore", tls.getTrustStore(),
                b -> b.trustStore(tls.getTrustStore(), chars(tls.getTrustStorePassword())));
        file(errors, "tls.keyStore", tls.getKeyStore(),
                b -> b.keyStore(tls.getKeyStore(), chars(tls.getKeyStorePassword())));
        if (tls.getCertificate() != null && tls.getPrivateKey() != null) {
            boolean readable = readable(errors, "tls.certificate", tls.getCertificate());
            readable &= readable(errors, "tls.privateKey", tls.getPrivateKey());
            if (readable) {
                tlsRule(errors, "tls.certificate", b -> b.keyPem(tls.getCertificate(), tls.getPrivateKey()));
            }
        }
    }

    static char[] chars(String password) {
        return password == null ? new char[0] : password.toCharArray();
    }

    private static <T> void option(Errors errors, String field, T value, BiConsumer<ClientOptions.Builder, T> set) {
        if (value == null) {
            return;
        }
        ClientOptions.Builder b = ClientOptions.builder();
        set.accept(b, value);
        try {
            b.build();
        } catch (IllegalArgumentException e) {
            errors.rejectValue(field, "invalid", rule(e));
        }
    }

    private static void file(Errors errors, String field, Path path, Consumer<ClientTls.Builder> set) {
        if (path != null && readable(errors, field, path)) {
            tlsRule(errors, field, set);
        }
    }

    private static boolean readable(Errors errors, String field, Path path) {
        String problem = !Files.exists(path) ? "there is no such file"
                : !Files.isRegularFile(path) ? "is not a regular file"
                : !Files.isReadable(path) ? "cannot be read by this process" : null;
        if (problem != null) {
            errors.rejectValue(field, "invalid", path.toAbsolutePath() + ": " + problem);
        }
        return problem == null;
    }

    private static void tlsRule(Errors errors, String field, Consumer<ClientTls.Builder> set) {
        ClientTls.Builder b = ClientTls.builder();
        set.accept(b);
        try {
            b.build();
        } catch (IllegalArgumentException e) {
            errors.rejectValue(field, "invalid", rule(e));
        }
    }

    /**
     * The rule of a client message {@code "Invalid <setting> = <value>: <rule>"}: the report
     * already names the property and its value, in the property's own terms.
     */
    private static String rule(IllegalArgumentException e) {
        String m = String.valueOf(e.getMessage());
        int colon = m.indexOf(": ");
        return m.startsWith("Invalid ") && colon > 0 ? m.substring(colon + 2) : m;
    }
}
