package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;

/** leasehold.cluster.raft-properties: what is refused and why, and that an entry wins over Leasehold's value. */
class RaftOverridesTests {

    @Test
    void tuningKeysAreAllowed() {
        for (String key : new String[] {"raft.server.log.force.sync.num", "raft.server.log.appender.buffer.element-limit",
                "raft.server.log.appender.buffer.byte-limit", "raft.server.log.write.buffer.size",
                "raft.grpc.flow.control.window", "raft.server.log.appender.wait-time.min",
                "raft.server.rpc.request.timeout", "raft.server.log.async-flush.enabled"}) {
            assertThat(RaftOverrides.refusal(key)).as(key).isNull();
        }
    }

    @Test
    void ownedKeysSayWhoOwnsThem() {
        assertThat(RaftOverrides.refusal("raft.server.rpc.timeout.max")).contains("election-timeout");
        assertThat(RaftOverrides.refusal("raft.server.log.unsafe-flush.enabled")).contains("fsync");
        assertThat(RaftOverrides.refusal("raft.server.snapshot.retention.file.num")).contains("snapshot-every");
        assertThat(RaftOverrides.refusal("raft.grpc.client.port")).contains("leasehold.cluster.peers");
        assertThat(RaftOverrides.refusal("leasehold.port")).contains("starting with raft.");
        // A prefix covers what is under it, not a key that merely starts with the same letters.
        assertThat(RaftOverrides.refusal("raft.server.storage.free-space.min")).isNull();
    }

    @Test
    void anEntryReplacesLeaseholdsValue() {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, TimeDuration.ZERO);
        RaftOverrides.apply(p, Map.of("raft.server.log.appender.wait-time.min", "1ms",
                "raft.server.log.force.sync.num", "16"));
        assertThat(RaftServerConfigKeys.Log.Appender.waitTimeMin(p).toLong(java.util.concurrent.TimeUnit.MILLISECONDS))
                .isEqualTo(1);
        assertThat(RaftServerConfigKeys.Log.forceSyncNum(p)).isEqualTo(16);
    }
}
