package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/**
 * The leader a formation probe reads from a peer's group info: what a node that refuses to rejoin
 * names in its {@code X 8} (it has no Raft group of its own to learn the leader from).
 */
class FormationLeaderSeenTests {

    private static final RaftPeerId N2 = RaftPeerId.valueOf("n2");

    @Test
    void aLeadingPeerNamesItselfAFollowerItsLeaderAndACandidateNobody() {
        assertThat(FormationRounds.leaderOf(N2, role(RaftProtos.RaftPeerRole.LEADER))).isEqualTo("n2");

        RaftProtos.RoleInfoProto follower = role(RaftProtos.RaftPeerRole.FOLLOWER).toBuilder()
                .setFollowerInfo(RaftProtos.FollowerInfoProto.newBuilder().setLeaderInfo(
                        RaftProtos.ServerRpcProto.newBuilder().setId(
                                RaftProtos.RaftPeerProto.newBuilder().setId(ByteString.copyFromUtf8("n3")))))
                .build();
        assertThat(FormationRounds.leaderOf(N2, follower)).isEqualTo("n3");

        assertThat(FormationRounds.leaderOf(N2, role(RaftProtos.RaftPeerRole.FOLLOWER))).as("no leader known").isNull();
        assertThat(FormationRounds.leaderOf(N2, role(RaftProtos.RaftPeerRole.CANDIDATE))).isNull();
        assertThat(FormationRounds.leaderOf(N2, null)).as("no role info (a peer without the group)").isNull();
    }

    private static RaftProtos.RoleInfoProto role(RaftProtos.RaftPeerRole r) {
        return RaftProtos.RoleInfoProto.newBuilder().setRole(r).build();
    }
}
