package dev.leasehold.cluster.tls;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.registry.NanoClock;

/**
 * Raft connections refused by cluster TLS, before any Raft message is read: a count per reason
 * (the meter {@code leasehold_cluster_peer_refused_total{reason}}) and one WARN naming the remote
 * address and the reason, at most once per {@value #WARN_EVERY_SECONDS} s, with the number held
 * back since; every refusal at DEBUG. Anyone who reaches the Raft port can cause refusals at will,
 * so the log must not grow with them. Thread-safe.
 */
public final class PeerRefusals {

    private static final Logger LOG = LoggerFactory.getLogger(PeerRefusals.class);
    static final long WARN_EVERY_SECONDS = 60;

    /** Why a connection to the Raft port was refused. */
    public enum Reason {
        /** Not TLS at all (a plaintext gRPC peer, a scanner). */
        PLAINTEXT,
        /** TLS without a client certificate. */
        NO_CERTIFICATE,
        /** A certificate that does not chain to the bundle's trust (self-signed, a foreign CA, expired). */
        UNTRUSTED,
        /** A trusted certificate that names no configured member (see {@link PeerIdentities}). */
        NOT_A_MEMBER,
        /** Any other failed handshake (protocol or cipher mismatch, a reset mid-handshake). */
        HANDSHAKE;

        /** The meter tag value: {@code not-a-member}. */
        public String tag() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private final Map<Reason, AtomicLong> counts = new EnumMap<>(Reason.class);
    private final NanoClock clock;
    private final long intervalNanos = WARN_EVERY_SECONDS * 1_000_000_000L;
    private final AtomicLong lastWarn;
    private final AtomicLong heldBack = new AtomicLong();

    /** @param clock decides when the next WARN may be logged */
    public PeerRefusals(NanoClock clock) {
        this.clock = clock;
        this.lastWarn = new AtomicLong(clock.nanoTime() - intervalNanos);
        for (Reason r : Reason.values()) {
            counts.put(r, new AtomicLong());
        }
    }

    /** Counts one refused connection and logs it (WARN rate-limited, DEBUG always). */
    public void refused(Object remote, Reason reason, String detail) {
        counts.get(reason).incrementAndGet();
        LOG.debug("Refused Raft connection from {}: {} ({})", remote, reason.tag(), detail);
        long now = clock.nanoTime();
        long last = lastWarn.get();
        if (now - last >= intervalNanos && lastWarn.compareAndSet(last, now)) {
            long more = heldBack.getAndSet(0);
            LOG.warn("Refused Raft connection from {}: {} ({}){}; leasehold.cluster.tls.bundle requires a client "
                    + "certificate from the cluster's CA naming a member; further refusals are logged at DEBUG, and at "
                    + "most once per {} s at WARN", remote, reason.tag(), detail,
                    more > 0 ? " (" + more + " more since the last warning)" : "", WARN_EVERY_SECONDS);
        } else {
            heldBack.incrementAndGet();
        }
    }

    /** Connections refused so far for this reason. */
    public long count(Reason reason) {
        return counts.get(reason).get();
    }
}
