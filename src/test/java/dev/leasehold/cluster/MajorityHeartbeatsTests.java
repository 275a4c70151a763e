package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** The leader's "have I heard from a majority" rule, on the figures Ratis reports. */
class MajorityHeartbeatsTests {

    private static ServerRpcProto follower(String id, long elapsedMs) {
        return ServerRpcProto.newBuilder().setId(RaftPeerProto.newBuilder().setId(ByteString.copyFromUtf8(id)))
                .setLastRpcElapsedTimeMs(elapsedMs).build();
    }

    @Test
    void oneFreshFollowerOfThreeVotersIsAMajorityWithTheLeader() {
        long heard = MajorityHeartbeats.heard(List.of("n1", "n2", "n3"),
                List.of(follower("n2", 200), follower("n3", 4000)), 1500);
        assertThat(heard).isEqualTo(2);
        assertThat(MajorityHeartbeats.isMajority(heard, 3)).isTrue();
    }

    @Test
    void aLeaderCutFromBothFollowersHasNoMajority() {
        long heard = MajorityHeartbeats.heard(List.of("n1", "n2", "n3"),
                List.of(follower("n2", 1501), follower("n3", 1600)), 1500);
        assertThat(heard).isEqualTo(1);
        assertThat(MajorityHeartbeats.isMajority(heard, 3)).isFalse();
    }

    @Test
    void anAnswerExactlyAtTheLimitStillCounts() {
        assertThat(MajorityHeartbeats.heard(List.of("n1", "n2", "n3"), List.of(follower("n2", 1500)), 1500))
                .isEqualTo(2);
    }

    @Test
    void listenersAndFormerMembersDoNotCountForTheMajority() {
        // n4 is a listener (not a voter), n9 was removed: fresh answers from them are no majority.
        long heard = MajorityHeartbeats.heard(List.of("n1", "n2", "n3"),
                List.of(follower("n4", 10), follower("n9", 10), follower("n2", 5000)), 1500);
        assertThat(heard).isEqualTo(1);
        assertThat(MajorityHeartbeats.isMajority(heard, 3)).isFalse();
    }

    @Test
    void fiveVotersNeedThreeAndFourNeedThree() {
        assertThat(MajorityHeartbeats.isMajority(2, 5)).isFalse();
        assertThat(MajorityHeartbeats.isMajority(3, 5)).isTrue();
        assertThat(MajorityHeartbeats.isMajority(2, 4)).isFalse();
        assertThat(MajorityHeartbeats.isMajority(3, 4)).isTrue();
        assertThat(MajorityHeartbeats.isMajority(1, 1)).isTrue();
    }
}
