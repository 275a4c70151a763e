package dev.leasehold.metrics;

import dev.leasehold.cluster.tls.PeerRefusals;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * {@code leasehold_cluster_peer_refused_total{reason}}: connections to the Raft port refused by
 * cluster TLS before any Raft message was read, one series per reason ({@code plaintext},
 * {@code no-certificate}, {@code untrusted}, {@code not-a-member}, {@code handshake}), all present
 * from the start so an alert can use {@code increase()} without a missing series.
 */
public final class PeerRefusalMetrics implements MeterBinder {

    private final PeerRefusals refusals;

    /** @param refusals the node's refusal counts */
    public PeerRefusalMetrics(PeerRefusals refusals) {
        this.refusals = refusals;
    }

    @Override
    public void bindTo(MeterRegistry meters) {
        for (PeerRefusals.Reason reason : PeerRefusals.Reason.values()) {
            FunctionCounter.builder("leasehold.cluster.peer.refused", refusals, r -> r.count(reason))
                    .tag("reason", reason.tag())
                    .description("Raft connections refused by cluster TLS before any Raft message was read")
                    .register(meters);
        }
    }
}
