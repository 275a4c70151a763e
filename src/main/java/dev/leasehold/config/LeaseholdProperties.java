package dev.leasehold.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.cluster.RaftOverrides;
import dev.leasehold.protocol.Wire;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.server.ConnectionBudget;
import dev.leasehold.server.KeyAcl;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.store.LeaseHorizonStore;
import dev.leasehold.settings.SettingException;
import dev.leasehold.store.RecoveryGrace;
import dev.leasehold.store.ReservedTokens;
import dev.leasehold.store.TokenFloorRestore;

/**
 * Every {@code leasehold.*} setting, tuned in {@code application.yml}. Limits exist so that
 * overload becomes a {@code B} answer (or a refused connection), never an OutOfMemoryError.
 * Invalid values fail start-up with a message that names the property.
 *
 * <p>The {@code @DefaultValue}s here are the one source of the defaults. Those that code outside
 * Spring also needs are constants of the settings they become ({@link RegistryLimits#defaults()},
 * {@link ClusterSettings#defaults}, {@link LeaseholdServer.Settings#defaults}, the store's), so the
 * embedded test server and the test fixtures build a node from the same values. application.yml,
 * the table of docs/configuration.md and the Helm chart's values.yaml restate them for readers;
 * {@code ConfigurationDefaultsTests} fails when one of them says otherwise.
 *
 * @param port TCP port of the lock protocol; 0 picks a free port (tests).
 * @param address address the protocol port binds: {@code 127.0.0.1} (loopback, the default: nothing
 *        off this host reaches a server nobody configured), {@code 0.0.0.0} (every IPv4 interface),
 *        {@code ::} (every interface), or one interface's address. A plaintext bind beyond loopback
 *        logs a WARN naming {@code leasehold.tls.*}. In cluster mode a loopback bind with this node's
 *        {@code client-address} off loopback fails the start (clients sent here could not connect).
 *        Actuator's HTTP port has its own, {@code server.address} (loopback by default too).
 * @param listenBacklog connections the kernel may queue for the protocol port before the server
 *        accepts them; the kernel caps it at {@code net.core.somaxconn}. Too small a queue turns a
 *        connection flood into SYN retransmits: seconds of delay for a client's first answer.
 * @param dataDir directory for the fencing-token high-water mark and the lease horizon; created if
 *        missing; start-up fails, naming it, if it cannot be written or holds a corrupt token file.
 * @param maxKeyBytes largest key in UTF-8 bytes; a longer key is protocol error 4.
 * @param maxWaitersPerKey queued Acquires allowed on one key; one more gets {@code B}.
 * @param maxWaitersTotal queued Acquires allowed over all keys; one more gets {@code B}.
 * @param maxPendingPerSession queued (still waiting) Acquires allowed per session.
 * @param maxHeldKeys keys that may hold an active grant at once; one more grant gets {@code B}.
 * @param maxConnections open protocol sessions; further connections are closed at once. Lowered at
 *        start to fit the process's open-file limit, keeping a reserve for the data directory,
 *        the management port and the JVM (see {@link ConnectionBudget}).
 * @param frameTimeout a frame not finished this long after its first byte gets {@code X 5}; only
 *        time the server spends reading the session counts (not while backpressure pauses it).
 *        Also the bound on closing a session after {@code X} when its client neither closes nor reads.
 * @param tokenBlockSize fencing tokens reserved per fsync'd write of the high-water mark.
 * @param ioThreads event-loop threads for the protocol port; 0 means one per CPU core.
 * @param recoveryGrace after start-up, no key is granted for this long, so that leases handed out
 *        before a crash or restart have run out: {@code auto} (none on a first start; else from the
 *        stored lease horizon, at most 255 s; assumes the wall clock does not step forward across
 *        the restart by more than {@code recovery-clock-slack}), a duration up to {@code 255s}
 *        ({@code 255s} is always safe), or {@code 0s} to turn it off (a key can then have two
 *        holders right after a restart). See {@link RecoveryGrace}.
 * @param recoveryLookahead how far beyond the longest lease in use (granted or extended in the
 *        last 10 minutes) the lease horizon is written, clock slack included: after a crash the
 *        grace is at most that lease plus this. Smaller means a shorter grace and more horizon
 *        writes (one per {@code lookahead − slack} under steady load).
 * @param recoveryClockSlack how far the wall clock may step forward across a restart without
 *        shortening the grace below the leases still running; part of {@code recovery-lookahead}.
 * @param drainTimeout bound on the graceful stop (SIGTERM, context close): the server stops
 *        accepting sessions, answers {@code B} to every queued Acquire, flushes and closes
 *        sessions; sessions still not flushed when it runs out are closed anyway.
 * @param lockDelay after a lease <em>expires</em> (its holder neither released nor extended it),
 *        the key is granted to nobody for this long, so a holder that lost its lease while its
 *        writes were still in flight cannot be overtaken at once (PROTOCOL.md section 12; Chubby's
 *        lock-delay). A Release ends a grant without delay. {@code 0s} (the default) = off; whole
 *        seconds up to {@code 60s}.
 * @param maxSharedHoldersPerKey the largest limit of a shared acquire ({@code S}), and the number
 *        of shared grants a read lock (limit 0) may have at once; a larger limit is {@code X 3}
 *        (PROTOCOL.md section 13); 1..65535.
 * @param maxSharedTotal shared grants plus queued shared acquires over all keys; one more
 *        {@code S} gets {@code B}.
 * @param maxWait the longest wait an {@code M} (revision 1.4's millisecond acquire) may ask for;
 *        a longer {@code wait_ms} is {@code X 3}, and a Hello reports it (PROTOCOL.md 14.4). From
 *        {@code 255s} (every {@code A} and {@code S} wait fits) to {@code 3600s}, to the millisecond.
 * @param maxWatchesPerSession open watches (revision 1.4's {@code O}, PROTOCOL.md section 16) of one
 *        session; one more {@code O} gets {@code B watch}. At least 0.
 * @param maxWatchesTotal open watches over all sessions; one more {@code O} gets {@code B watch}.
 * @param maxValueBytes the longest value an {@code M} or a {@code V} may carry (PROTOCOL.md 17.5); a
 *        longer {@code vlen} is {@code X 3}, and a Hello reports it. 0..1024; 0 turns values off.
 * @param tls TLS on the protocol port from a Spring SSL bundle; off unless {@code tls.bundle} is set.
 * @param acl key ACLs for mutual-TLS clients: identity ({@code subject:<DN>}, {@code dns:<name>},
 *        {@code uri:<uri>}, {@code email:<address>} or {@code ip:<address>}; in YAML write the key in
 *        brackets, {@code "[subject:CN=orders,O=Example]"}) to the key prefixes it may use. Empty: every
 *        client may use every key. Needs {@code tls.client-auth} want or need.
 * @param cluster three-node cluster mode (PROTOCOL.md section 10); off unless {@code cluster.node-id} is set.
 * @param restoreFrom path of a token-floor snapshot ({@code leasehold admin snapshot save}) to start a new
 *        data directory from ({@code ""}: none): tokens start above its floor plus {@code token-block-size}. Refused on
 *        a data directory with state, or a snapshot that does not verify; accepted again on the
 *        directory restored from it. See {@link TokenFloorRestore}.
 */
@ConfigurationProperties(prefix = "leasehold", ignoreUnknownFields = false)
public record LeaseholdProperties(
        @DefaultValue("" + Wire.DEFAULT_PORT) int port,
        @DefaultValue(DEFAULT_ADDRESS) String address,
        @DefaultValue("" + LeaseholdServer.Settings.DEFAULT_LISTEN_BACKLOG) int listenBacklog,
        @DefaultValue("./data") Path dataDir,
        @DefaultValue("" + LeaseholdServer.Settings.DEFAULT_MAX_KEY_BYTES) int maxKeyBytes,
        @DefaultValue("" + RegistryLimits.DEFAULT_MAX_WAITERS_PER_KEY) int maxWaitersPerKey,
        @DefaultValue("" + RegistryLimits.DEFAULT_MAX_WAITERS_TOTAL) int maxWaitersTotal,
        @DefaultValue("" + RegistryLimits.DEFAULT_MAX_PENDING_PER_SESSION) int maxPendingPerSession,
        @DefaultValue("" + RegistryLimits.DEFAULT_MAX_HELD_KEYS) int maxHeldKeys,
        @DefaultValue("" + LeaseholdServer.Settings.DEFAULT_MAX_CONNECTIONS) int maxConnections,
        @DefaultValue(LeaseholdServer.Settings.DEFAULT_FRAME_TIMEOUT_SECONDS + "s") Duration frameTimeout,
        @DefaultValue("" + ReservedTokens.DEFAULT_BLOCK_SIZE) long tokenBlockSize,
        @DefaultValue("0") int ioThreads,
        @DefaultValue("auto") RecoveryGrace recoveryGrace,
        @DefaultValue(LeaseHorizonStore.Settings.DEFAULT_LOOKAHEAD_SECONDS + "s") Duration recoveryLookahead,
        @DefaultValue(LeaseHorizonStore.Settings.DEFAULT_SLACK_SECONDS + "s") Duration recoveryClockSlack,
        @DefaultValue(LeaseholdServer.Settings.DEFAULT_DRAIN_TIMEOUT_SECONDS + "s") Duration drainTimeout,
        @DefaultValue(RegistryLimits.DEFAULT_LOCK_DELAY_SECONDS + "s") Duration lockDelay,
        @DefaultValue("" + RegistryLimits.DEFAULT_MAX_SHARED_PER_KEY) int maxSharedHoldersPerKey,
        @DefaultValue("" + RegistryLimits.DEFAULT_MAX_SHARED_TOTAL) int maxSharedTotal,
        @DefaultValue(LeaseholdServer.Settings.DEFAULT_MAX_WAIT_SECONDS + "s") Duration maxWait,
        @DefaultValue("" + LeaseholdServer.Settings.DEFAULT_MAX_WATCHES_PER_SESSION) int maxWatchesPerSession,
        @DefaultValue("" + LeaseholdServer.Settings.DEFAULT_MAX_WATCHES_TOTAL) int maxWatchesTotal,
        @DefaultValue("" + LeaseholdServer.Settings.DEFAULT_MAX_VALUE_BYTES) int maxValueBytes,
        @DefaultValue Tls tls,
        Map<String, List<String>> acl,
        @DefaultValue Cluster cluster,
        String restoreFrom) {

    /** The default of {@code leasehold.address}: loopback, as Redis and etcd do. */
    static final String DEFAULT_ADDRESS = "127.0.0.1";

    public LeaseholdProperties {
        restoreFrom = restoreFrom == null || restoreFrom.isBlank() ? null : restoreFrom.trim();
        check(port >= 0 && port <= 65535, "leasehold.port", port, "must be 0..65535");
        check(address != null && !address.isBlank() && resolves(address), "leasehold.address", address,
                "must be an address of this host, e.g. 127.0.0.1 (loopback) or 0.0.0.0 (every interface)");
        check(listenBacklog >= 1 && listenBacklog <= 65535, "leasehold.listen-backlog", listenBacklog,
                "must be 1..65535");
        check(dataDir != null && !dataDir.toString().isBlank(), "leasehold.data-dir", dataDir, "must be set");
        check(maxKeyBytes >= 1 && maxKeyBytes <= 65536, "leasehold.max-key-bytes", maxKeyBytes, "must be 1..65536");
        check(maxWaitersPerKey >= 0, "leasehold.max-waiters-per-key", maxWaitersPerKey, "must be >= 0");
        check(maxWaitersTotal >= 0, "leasehold.max-waiters-total", maxWaitersTotal, "must be >= 0");
        check(maxPendingPerSession >= 0, "leasehold.max-pending-per-session", maxPendingPerSession, "must be >= 0");
        check(maxHeldKeys >= 1, "leasehold.max-held-keys", maxHeldKeys, "must be >= 1");
        check(maxConnections >= 1, "leasehold.max-connections", maxConnections, "must be >= 1");
        check(frameTimeout != null && !frameTimeout.isNegative() && !frameTimeout.isZero()
                && frameTimeout.compareTo(Duration.ofHours(1)) <= 0,
                "leasehold.frame-timeout", frameTimeout, "must be more than 0 and at most 1h");
        check(tokenBlockSize >= 1 && tokenBlockSize <= 1L << 40,
                "leasehold.token-block-size", tokenBlockSize, "must be 1..2^40");
        check(ioThreads >= 0 && ioThreads <= 1024, "leasehold.io-threads", ioThreads, "must be 0..1024");
        check(recoveryGrace != null, "leasehold.recovery-grace", recoveryGrace, "must be auto or a duration 0s..255s");
        check(recoveryClockSlack != null && !recoveryClockSlack.isNegative()
                && recoveryClockSlack.compareTo(Duration.ofSeconds(60)) <= 0,
                "leasehold.recovery-clock-slack", recoveryClockSlack, "must be 0s..60s");
        check(recoveryLookahead != null && recoveryLookahead.compareTo(recoveryClockSlack.plusSeconds(1)) >= 0
                && recoveryLookahead.compareTo(Duration.ofSeconds(255)) <= 0,
                "leasehold.recovery-lookahead", recoveryLookahead,
                "must be at least leasehold.recovery-clock-slack + 1s (" + recoveryClockSlack.plusSeconds(1)
                        + ") and at most 255s");
        check(drainTimeout != null && !drainTimeout.isNegative() && !drainTimeout.isZero()
                && drainTimeout.compareTo(Duration.ofMinutes(10)) <= 0,
                "leasehold.drain-timeout", drainTimeout, "must be more than 0 and at most 10m");
        check(lockDelay != null && !lockDelay.isNegative() && lockDelay.compareTo(Duration.ofSeconds(60)) <= 0
                && lockDelay.toNanosPart() == 0, "leasehold.lock-delay", lockDelay,
                "must be whole seconds from 0s (off) to 60s");
        check(maxSharedHoldersPerKey >= 1 && maxSharedHoldersPerKey <= 65535, "leasehold.max-shared-holders-per-key",
                maxSharedHoldersPerKey, "must be 1..65535");
        check(maxSharedTotal >= 0, "leasehold.max-shared-total", maxSharedTotal, "must be >= 0");
        check(maxWait != null && maxWait.compareTo(LeaseholdServer.Settings.MIN_MAX_WAIT) >= 0
                && maxWait.compareTo(LeaseholdServer.Settings.MAX_MAX_WAIT) <= 0 && maxWait.toNanosPart() % 1_000_000 == 0,
                "leasehold.max-wait", maxWait, "must be 255s..3600s, to the millisecond");
        check(maxWatchesPerSession >= 0, "leasehold.max-watches-per-session", maxWatchesPerSession, "must be >= 0");
        check(maxWatchesTotal >= 0, "leasehold.max-watches-total", maxWatchesTotal, "must be >= 0");
        check(maxValueBytes >= 0 && maxValueBytes <= LeaseholdServer.Settings.MAX_MAX_VALUE_BYTES,
                "leasehold.max-value-bytes", maxValueBytes, "must be 0..1024 (0: values off)");
        tls = tls != null ? tls : new Tls(null, ClientAuth.NONE);
        acl = acl == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(acl));
        for (String identity : acl.keySet()) {
            try {
                KeyAcl.checkIdentity(identity);
            } catch (IllegalArgumentException e) {
                check(false, "leasehold.acl", identity, e.getMessage());
            }
            check(acl.get(identity) != null, "leasehold.acl", identity, "needs a list of key prefixes");
        }
        cluster = cluster != null ? cluster : new Cluster(null, null, null, null, ClusterSettings.DEFAULT_MAX_BATCH,
                ClusterSettings.DEFAULT_MAX_IN_FLIGHT, ClusterSettings.DEFAULT_MAX_PENDING,
                ClusterSettings.DEFAULT_SNAPSHOT_EVERY, null, ClusterSettings.DEFAULT_INITIAL_TOKEN, false, null, null);
        check(!cluster.enabled() || maxKeyBytes <= 65535, "leasehold.max-key-bytes", maxKeyBytes,
                "must be at most 65535 in cluster mode");
        if (cluster.enabled() && loopback(address) && cluster.peers().get(cluster.nodeId()) != null) {
            String own = cluster.peers().get(cluster.nodeId()).clientAddress();
            String ownHost = own.substring(0, own.lastIndexOf(':')).replaceAll("^\\[|]$", "");
            check(!resolves(ownHost) || loopback(ownHost), "leasehold.address", address,
                    "binds loopback only, but this node's leasehold.cluster.peers." + cluster.nodeId()
                            + ".client-address is " + own + ": clients sent there could not connect; set "
                            + "leasehold.address to that interface's address or 0.0.0.0");
        }
        check(acl.isEmpty() || tls.clientAuth() != ClientAuth.NONE, "leasehold.acl", acl.keySet(),
                "key ACLs need client certificates: set leasehold.tls.bundle and leasehold.tls.client-auth "
                        + "to want or need");
    }

    /**
     * TLS on the protocol port. Every session is TLS when {@code bundle} is set; there is no
     * plaintext fallback.
     *
     * @param bundle name of a Spring SSL bundle ({@code spring.ssl.bundle.pem.<name>} or
     *        {@code .jks.<name>}) with the server's key and certificate, and, for client
     *        certificates, the trust material they are checked against. With the bundle's
     *        {@code reload-on-update: true}, new sessions use a rotated certificate; open ones go on.
     * @param clientAuth client certificates: {@code none}, {@code want} (checked when sent) or
     *        {@code need} (a session without a trusted one fails its handshake).
     */
    public record Tls(String bundle, @DefaultValue("none") ClientAuth clientAuth) {

        public Tls {
            clientAuth = clientAuth != null ? clientAuth : ClientAuth.NONE;
            check(clientAuth == ClientAuth.NONE || (bundle != null && !bundle.isBlank()), "leasehold.tls.client-auth",
                    clientAuth.name().toLowerCase(Locale.ROOT), "needs leasehold.tls.bundle");
        }

        /** True when the protocol port speaks TLS. */
        public boolean enabled() {
            return bundle != null && !bundle.isBlank();
        }
    }

    /**
     * Cluster mode (PROTOCOL.md section 10, docs/cluster.md). Off while {@code node-id} is unset:
     * then the server runs alone, as always.
     *
     * @param nodeId this node's id; must be a key of {@code peers}
     * @param peers every node, this one included: id → {@code raft-address} (host:port of the Raft
     *        endpoint) and {@code client-address} (host:port clients use, named in {@code X 8})
     * @param electionTimeoutMin Raft election timeout, lower bound (randomised between min and max);
     *        Ratis's own 150–300 ms causes spurious elections on loaded machines (docs/cluster.md)
     * @param electionTimeoutMax upper bound; a new leader also runs every lease this much longer
     * @param maxBatch decisions per Raft log entry at most
     * @param maxInFlight batches proposed and not yet committed at most; Ratis's cost is per log
     *        entry, so one batch in flight lets the next one grow (measurements: docs/cluster.md)
     * @param maxPending decisions waiting to be proposed; past it Acquires get {@code B}
     * @param snapshotEvery Raft log entries between snapshots; the log is purged up to each snapshot
     * @param tls mutual TLS on every Raft connection (docs/security.md); off unless {@code tls.bundle} is set
     * @param initialToken the cluster issues tokens above this (and above its replicated counter):
     *        set it, on every node, above the last token the resources have seen when a cluster
     *        starts from empty disks (after a single node, or after losing every disk)
     * @param join a node that is not a founding member: on empty storage it does not form or vote
     *        but waits for {@code leasehold cluster add} (docs/cluster.md "Changing members");
     *        ignored once the node has storage
     * @param raftBindAddress the local address the Raft port binds; unset: every interface
     * @param raftProperties Ratis properties ({@code raft.*}) applied after Leasehold's own, for
     *        tuning (appender buffers, {@code raft.server.log.force.sync.num}, the log write buffer,
     *        {@code raft.grpc.flow.control.window}); in YAML write each key in brackets. Keys that
     *        Leasehold sets from its own settings or that would weaken durability (storage, ports,
     *        TLS, election timeouts, unsafe flush, snapshots, read option) are refused at start-up
     */
    public record Cluster(String nodeId, Map<String, Peer> peers,
            @DefaultValue(ClusterSettings.DEFAULT_ELECTION_TIMEOUT_MIN_MILLIS + "ms") Duration electionTimeoutMin,
            @DefaultValue(ClusterSettings.DEFAULT_ELECTION_TIMEOUT_MAX_MILLIS + "ms") Duration electionTimeoutMax,
            @DefaultValue("" + ClusterSettings.DEFAULT_MAX_BATCH) int maxBatch,
            @DefaultValue("" + ClusterSettings.DEFAULT_MAX_IN_FLIGHT) int maxInFlight,
            @DefaultValue("" + ClusterSettings.DEFAULT_MAX_PENDING) int maxPending,
            @DefaultValue("" + ClusterSettings.DEFAULT_SNAPSHOT_EVERY) long snapshotEvery, @DefaultValue ClusterTls tls,
            @DefaultValue("" + ClusterSettings.DEFAULT_INITIAL_TOKEN) long initialToken,
            @DefaultValue("false") boolean join,
            String raftBindAddress, Map<String, String> raftProperties) {

        public Cluster {
            raftProperties = raftProperties == null ? Map.of()
                    : Collections.unmodifiableMap(new LinkedHashMap<>(raftProperties));
            for (Map.Entry<String, String> e : raftProperties.entrySet()) {
                String refusal = RaftOverrides.refusal(e.getKey());
                check(refusal == null, "leasehold.cluster.raft-properties[" + e.getKey() + "]", e.getValue(), refusal);
                check(e.getValue() != null && !e.getValue().isBlank(),
                        "leasehold.cluster.raft-properties[" + e.getKey() + "]", e.getValue(), "needs a value");
            }
            tls = tls != null ? tls : new ClusterTls(null);
            raftBindAddress = raftBindAddress == null || raftBindAddress.isBlank() ? null : raftBindAddress.trim();
            peers = peers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(peers));
            electionTimeoutMin = electionTimeoutMin != null ? electionTimeoutMin
                    : Duration.ofMillis(ClusterSettings.DEFAULT_ELECTION_TIMEOUT_MIN_MILLIS);
            electionTimeoutMax = electionTimeoutMax != null ? electionTimeoutMax
                    : Duration.ofMillis(ClusterSettings.DEFAULT_ELECTION_TIMEOUT_MAX_MILLIS);
            boolean enabled = nodeId != null && !nodeId.isBlank();
            check(enabled || peers.isEmpty(), "leasehold.cluster.node-id", nodeId,
                    "must be set when leasehold.cluster.peers is (one of " + peers.keySet() + ")");
            if (enabled) {
                check(peers.containsKey(nodeId), "leasehold.cluster.node-id", nodeId,
                        "must be a key of leasehold.cluster.peers " + peers.keySet());
                for (Map.Entry<String, Peer> e : peers.entrySet()) {
                    String prefix = "leasehold.cluster.peers." + e.getKey();
                    check(e.getKey().matches("[A-Za-z0-9_-]{1,64}"), prefix, e.getKey(),
                            "a node id is 1-64 letters, digits, '-' or '_'");
                    Peer p = e.getValue();
                    check(p != null && hostPort(p.raftAddress()), prefix + ".raft-address",
                            p == null ? null : p.raftAddress(), "must be host:port");
                    check(hostPort(p.clientAddress()), prefix + ".client-address", p.clientAddress(),
                            "must be host:port");
                    check(p.identity() == null || p.identity().matches("(dns|ip|uri):.+"), prefix + ".identity",
                            p.identity(), "must be dns:<name>, ip:<address> or uri:<uri> (a subject alternative name)");
                }
            }
            check(initialToken >= 0 && initialToken <= Long.MAX_VALUE / 2, "leasehold.cluster.initial-token", initialToken,
                    "must be 0..2^62");
            check(!electionTimeoutMin.isNegative() && electionTimeoutMin.toMillis() >= 100,
                    "leasehold.cluster.election-timeout-min", electionTimeoutMin, "must be at least 100ms");
            check(electionTimeoutMax.compareTo(electionTimeoutMin) > 0 && electionTimeoutMax.toSeconds() <= 60,
                    "leasehold.cluster.election-timeout-max", electionTimeoutMax,
                    "must be more than election-timeout-min and at most 60s");
            check(maxBatch >= 1 && maxBatch <= 65536, "leasehold.cluster.max-batch", maxBatch, "must be 1..65536");
            check(maxInFlight >= 1 && maxInFlight <= 1024, "leasehold.cluster.max-in-flight", maxInFlight,
                    "must be 1..1024");
            check(maxPending >= 1, "leasehold.cluster.max-pending", maxPending, "must be >= 1");
            check(snapshotEvery >= 100, "leasehold.cluster.snapshot-every", snapshotEvery, "must be >= 100");
        }

        /** True when this server runs as a cluster node. */
        public boolean enabled() {
            return nodeId != null && !nodeId.isBlank();
        }

        private static boolean hostPort(String s) {
            if (s == null) {
                return false;
            }
            int colon = s.lastIndexOf(':');
            if (colon <= 0) {
                return false;
            }
            try {
                int port = Integer.parseInt(s.substring(colon + 1));
                return port >= 1 && port <= 65535;
            } catch (NumberFormatException e) {
                return false;
            }
        }

        /**
         * One node's addresses.
         *
         * @param raftAddress host:port of its Raft endpoint (gRPC)
         * @param clientAddress host:port of its lock protocol port, as clients reach it
         * @param identity with cluster TLS, the subject alternative name ({@code dns:}, {@code ip:} or
         *        {@code uri:}) its certificate must carry to be accepted as this member; unset: a DNS or
         *        IP SAN equal to the host of {@code raft-address}
         */
        public record Peer(String raftAddress, String clientAddress, String identity) {
        }

        /**
         * Mutual TLS between the nodes.
         *
         * @param bundle the Spring SSL bundle ({@code spring.ssl.bundle.pem.<name>} or {@code .jks.<name>})
         *        used to listen and to dial on every Raft connection: its key (a certificate with both
         *        serverAuth and clientAuth usages that names this node) and its trust (the cluster's CA)
         */
        public record ClusterTls(String bundle) {

            /** True when Raft connections use mutual TLS. */
            public boolean enabled() {
                return bundle != null && !bundle.isBlank();
            }
        }
    }

    /** Whether the server asks for client certificates (mutual TLS). */
    public enum ClientAuth {
        /** No client certificates. */
        NONE,
        /** Asked for and verified when sent; a client without one may connect (and, with ACLs, use no key). */
        WANT,
        /** Required: a client without a trusted certificate fails the handshake. */
        NEED
    }

    /** Event-loop threads to start: {@link #ioThreads()} or, when 0, one per core. */
    public int effectiveIoThreads() {
        return ioThreads > 0 ? ioThreads : Runtime.getRuntime().availableProcessors();
    }

    /** True when {@code host} resolves to a loopback address (127.0.0.0/8, ::1, localhost). */
    static boolean loopback(String host) {
        try {
            return java.net.InetAddress.getByName(host).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    private static boolean resolves(String host) {
        try {
            InetAddress.getByName(host);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static void check(boolean ok, String property, Object value, String rule) {
        if (!ok) {
            throw new SettingException(property, value, rule);
        }
    }
}
