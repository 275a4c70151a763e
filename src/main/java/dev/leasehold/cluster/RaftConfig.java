package dev.leasehold.cluster;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

import dev.leasehold.cluster.tls.RaftTls;

/**
 * How this node configures Ratis: the Raft server's properties from {@code leasehold.cluster.*},
 * the transport parameters (plaintext, or {@link RaftTls}), and the admin client aimed at this
 * node. Everything else in the package takes its Ratis settings from here.
 */
final class RaftConfig {

    /** One Raft group per cluster; the id only has to agree between the nodes. */
    static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
            UUID.nameUUIDFromBytes("leasehold-cluster".getBytes(StandardCharsets.UTF_8)));

    private RaftConfig() {
    }

    /** The Raft server's transport: mutual TLS to listen and dial, or plaintext without {@code tls}. */
    static Parameters serverParameters(RaftTls tls) {
        return tls == null ? new Parameters() : tls.serverParameters();
    }

    /** The transport of this node's own Raft clients (admin calls, probes, roster queries). */
    static Parameters clientParameters(RaftTls tls) {
        return tls == null ? new Parameters() : tls.clientParameters();
    }

    /** The admin client (leadership transfer on drain), aimed at this node. */
    static RaftClient adminClient(ClusterSettings settings, RaftGroup group, RaftPeerId self, RaftTls tls) {
        RaftProperties clientProps = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(clientProps,
                TimeDuration.valueOf(settings.electionTimeoutMax().toMillis(), TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder().setProperties(clientProps).setRaftGroup(group)
                .setParameters(clientParameters(tls)).setClientId(ClientId.randomId())
                .setLeaderId(self).setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
                        TimeDuration.valueOf(20, TimeUnit.MILLISECONDS))).build();
    }

    /** The Raft server's properties: storage, ports, election timeouts, snapshots, then the operator's overrides. */
    static RaftProperties serverProperties(ClusterSettings settings) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, Collections.singletonList(settings.raftDir().toFile()));
        String raft = settings.self().raftAddress();
        int port = Integer.parseInt(raft.substring(raft.lastIndexOf(':') + 1));
        GrpcConfigKeys.Server.setPort(p, port);
        if (!settings.raftBindAddress().isEmpty()) {
            GrpcConfigKeys.Server.setHost(p, settings.raftBindAddress());
        }
        // Ratis's admin service (setConfiguration, transferLeadership) and client service on the
        // Raft port itself, behind its mutual TLS when on: never on a port of their own.
        GrpcConfigKeys.Admin.setPort(p, port);
        GrpcConfigKeys.Client.setPort(p, port);
        TimeDuration min = TimeDuration.valueOf(settings.electionTimeoutMin().toMillis(), TimeUnit.MILLISECONDS);
        TimeDuration max = TimeDuration.valueOf(settings.electionTimeoutMax().toMillis(), TimeUnit.MILLISECONDS);
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, min);
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, max);
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, min);
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, max);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, settings.snapshotEvery());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("32MB"));
        // Ratis waits at least 1 ms between two appendEntries by default. With one batch in flight
        // that wait sits on every commit's path (a hand-off is one commit); 0, as Ozone's SCM sets.
        // Measured with max-in-flight 1 on 2 cores: a small gain inside the noise (bench/NOTES.md).
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, TimeDuration.ZERO);
        // The only read-only request is the roster query of a node with empty storage: it must see
        // every committed entry, so the leader confirms its leadership first (read index).
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        // leasehold.cluster.raft-properties last: the operator's tuning wins over the defaults above
        // (the keys Leasehold must own were refused at start-up).
        RaftOverrides.apply(p, settings.raftProperties());
        return p;
    }
}
