package dev.leasehold.client;

import java.time.Duration;

/**
 * Immutable settings of a {@link LeaseholdClient}, made with {@link #builder()}. Every setting
 * has a named default; {@link Builder#build()} rejects inconsistent values with an
 * {@link IllegalArgumentException} naming the setting.
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code poolSize}</td><td>{@value #DEFAULT_POOL_SIZE}</td><td>sessions (TCP connections)
 *   kept open; requests are pipelined on them</td></tr>
 * <tr><td>{@code connectTimeout}</td><td>2 s</td><td>TCP connect plus the session's opening
 *   ping; a session not up by then never took a request</td></tr>
 * <tr><td>{@code transportDeadline}</td><td>5 s</td><td>deadline {@code D} of a wait = 0 acquire
 *   (and of a ping); the server still makes one immediate attempt</td></tr>
 * <tr><td>{@code responseGrace}</td><td>2 s</td><td>how long after {@code D} a sent acquire may still
 *   be answered before its session is closed and the outcome is Indeterminate</td></tr>
 * <tr><td>{@code marginFloor}</td><td>50 ms</td><td>smallest lease safety margin</td></tr>
 * <tr><td>{@code driftRate}</td><td>0.01</td><td>assumed worst clock-rate difference between client
 *   and server; the margin is {@code max(floor, rate × (queued + lease))}</td></tr>
 * <tr><td>{@code tls}</td><td>none (plaintext)</td><td>TLS, and optionally a client certificate for
 *   mutual TLS: see {@link ClientTls}</td></tr>
 * </table>
 */
public final class ClientOptions {

    /** Default number of sessions. */
    public static final int DEFAULT_POOL_SIZE = 2;
    /** Default connect timeout (TCP connect and the opening ping). */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);
    /** Default deadline of a wait = 0 acquire (PROTOCOL.md 9.3). */
    public static final Duration DEFAULT_TRANSPORT_DEADLINE = Duration.ofSeconds(5);
    /** Default response grace after the deadline (PROTOCOL.md 9.8). */
    public static final Duration DEFAULT_RESPONSE_GRACE = Duration.ofSeconds(2);
    /** Default floor of the lease safety margin (PROTOCOL.md 9.6). */
    public static final Duration DEFAULT_MARGIN_FLOOR = Duration.ofMillis(50);
    /** Default assumed clock drift rate (PROTOCOL.md 9.6). */
    public static final double DEFAULT_DRIFT_RATE = 0.01;
    /** Default {@link #protocolRevision()}: ask each server with a Hello (PROTOCOL.md 9.13). */
    public static final String DEFAULT_PROTOCOL_REVISION = "auto";

    private static final java.util.List<String> PROTOCOL_REVISIONS = java.util.List.of("auto", "1.3", "1.4");

    private static final ClientOptions DEFAULTS = builder().build();

    private final int poolSize;
    private final Duration connectTimeout;
    private final Duration transportDeadline;
    private final Duration responseGrace;
    private final Duration marginFloor;
    private final double driftRate;
    private final String threadNamePrefix;
    private final ClientTls tls;
    private final boolean failFast;
    private final String protocolRevision;

    private ClientOptions(Builder b) {
        this.poolSize = b.poolSize;
        this.connectTimeout = b.connectTimeout;
        this.transportDeadline = b.transportDeadline;
        this.responseGrace = b.responseGrace;
        this.marginFloor = b.marginFloor;
        this.driftRate = b.driftRate;
        this.threadNamePrefix = b.threadNamePrefix;
        this.tls = b.tls;
        this.failFast = b.failFast;
        this.protocolRevision = b.protocolRevision;
    }

    /** The defaults. */
    public static ClientOptions defaults() {
        return DEFAULTS;
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from these settings. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.poolSize = poolSize;
        b.connectTimeout = connectTimeout;
        b.transportDeadline = transportDeadline;
        b.responseGrace = responseGrace;
        b.marginFloor = marginFloor;
        b.driftRate = driftRate;
        b.threadNamePrefix = threadNamePrefix;
        b.tls = tls;
        b.failFast = failFast;
        b.protocolRevision = protocolRevision;
        return b;
    }

    public int poolSize() {
        return poolSize;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration transportDeadline() {
        return transportDeadline;
    }

    public Duration responseGrace() {
        return responseGrace;
    }

    public Duration marginFloor() {
        return marginFloor;
    }

    public double driftRate() {
        return driftRate;
    }

    /** Prefix of the client's thread names, or {@code null} for {@code leasehold-client-<n>}. */
    public String threadNamePrefix() {
        return threadNamePrefix;
    }

    /** TLS settings, or {@code null} for plaintext TCP. */
    public ClientTls tls() {
        return tls;
    }

    /**
     * True when a request not yet sent ends as unavailable as soon as every server has failed to
     * set up a session (refused, unknown host, TLS handshake...), naming each failure, instead of
     * at its deadline. Off by default (a service keeps trying until the deadline); the command
     * line turns it on.
     */
    public boolean failFast() {
        return failFast;
    }

    /**
     * Which protocol revision sessions speak (PROTOCOL.md 9.13): {@code "auto"} (the default) opens
     * every session with a Hello and speaks 1.4 (millisecond waits, Withdraw) where the server
     * answers it, 1.3 frames where it answers {@code X 1} (until a session to that address fails);
     * {@code "1.3"} never sends a Hello or any 1.4 frame; {@code "1.4"} requires 1.4 (an address
     * that answers the Hello with {@code X 1} is not used).
     */
    public String protocolRevision() {
        return protocolRevision;
    }

    @Override
    public String toString() {
        return "ClientOptions[poolSize=" + poolSize + ", connectTimeout=" + connectTimeout + ", transportDeadline="
                + transportDeadline + ", responseGrace=" + responseGrace + ", marginFloor=" + marginFloor
                + ", driftRate=" + driftRate + ", tls=" + tls + ", protocolRevision=" + protocolRevision + "]";
    }

    /** Mutable builder of {@link ClientOptions}; not thread-safe. */
    public static final class Builder {

        private int poolSize = DEFAULT_POOL_SIZE;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration transportDeadline = DEFAULT_TRANSPORT_DEADLINE;
        private Duration responseGrace = DEFAULT_RESPONSE_GRACE;
        private Duration marginFloor = DEFAULT_MARGIN_FLOOR;
        private double driftRate = DEFAULT_DRIFT_RATE;
        private String threadNamePrefix;
        private ClientTls tls;
        private boolean failFast;
        private String protocolRevision = DEFAULT_PROTOCOL_REVISION;

        private Builder() {
        }

        /** Sessions to keep, 1 to 64. */
        public Builder poolSize(int poolSize) {
            this.poolSize = poolSize;
            return this;
        }

        /** TCP connect plus opening ping, more than 0 and at most 5 minutes. */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        /** Deadline of a wait = 0 acquire and of a ping, more than 0 and at most 255 s. */
        public Builder transportDeadline(Duration transportDeadline) {
            this.transportDeadline = transportDeadline;
            return this;
        }

        /** Extra time after the deadline for a sent acquire's answer, 0 to 5 minutes. */
        public Builder responseGrace(Duration responseGrace) {
            this.responseGrace = responseGrace;
            return this;
        }

        /** Smallest lease safety margin, 0 to 10 s. */
        public Builder marginFloor(Duration marginFloor) {
            this.marginFloor = marginFloor;
            return this;
        }

        /** Assumed worst clock-rate drift, 0 to 0.5 (e.g. 0.01 for 1 %). */
        public Builder driftRate(double driftRate) {
            this.driftRate = driftRate;
            return this;
        }

        /** Prefix of thread names (e.g. to tell two clients apart in a thread dump). */
        public Builder threadNamePrefix(String threadNamePrefix) {
            this.threadNamePrefix = threadNamePrefix;
            return this;
        }

        /** Speak TLS (and, with a client certificate, mutual TLS); {@code null} for plaintext (default). */
        public Builder tls(ClientTls tls) {
            this.tls = tls;
            return this;
        }

        /** See {@link ClientOptions#failFast()}; default false. */
        public Builder failFast(boolean failFast) {
            this.failFast = failFast;
            return this;
        }

        /** See {@link ClientOptions#protocolRevision()}: {@code "auto"} (default), {@code "1.3"} or {@code "1.4"}. */
        public Builder protocolRevision(String protocolRevision) {
            this.protocolRevision = protocolRevision;
            return this;
        }

        /** Checks the settings and makes the immutable options. */
        public ClientOptions build() {
            check(poolSize >= 1 && poolSize <= 64, "poolSize", poolSize, "must be 1..64");
            checkDuration("connectTimeout", connectTimeout, false, Duration.ofMinutes(5));
            checkDuration("transportDeadline", transportDeadline, false, Duration.ofSeconds(255));
            checkDuration("responseGrace", responseGrace, true, Duration.ofMinutes(5));
            checkDuration("marginFloor", marginFloor, true, Duration.ofSeconds(10));
            check(driftRate >= 0 && driftRate <= 0.5, "driftRate", driftRate, "must be 0..0.5");
            check(threadNamePrefix == null || !threadNamePrefix.isBlank(), "threadNamePrefix", threadNamePrefix,
                    "must not be blank");
            check(PROTOCOL_REVISIONS.contains(protocolRevision), "protocolRevision", protocolRevision,
                    "must be auto, 1.3 or 1.4");
            return new ClientOptions(this);
        }

        private static void checkDuration(String name, Duration d, boolean zeroOk, Duration max) {
            check(d != null, name, null, "must be set");
            check(!d.isNegative() && (zeroOk || !d.isZero()) && d.compareTo(max) <= 0, name, d,
                    (zeroOk ? "must be 0.." : "must be more than 0 and at most ") + max);
        }

        private static void check(boolean ok, String name, Object value, String rule) {
            if (!ok) {
                throw new IllegalArgumentException("Invalid " + name + " = " + value + ": " + rule);
            }
        }
    }

    /** The engine's configuration from these options (internal). */
    dev.leasehold.client.internal.Config config(java.util.List<java.net.InetSocketAddress> servers, String name) {
        return new dev.leasehold.client.internal.Config(servers, poolSize(), connectTimeout().toNanos(),
                transportDeadline().toNanos(), responseGrace().toNanos(), marginFloor().toNanos(), driftRate(), name,
                tls() == null ? null : tls().sslContext(), tls() == null || tls().hostnameVerification())
                .withFailFast(failFast())
                .withProtocolRevision(dev.leasehold.client.internal.Config.revision(protocolRevision()));
    }
}
