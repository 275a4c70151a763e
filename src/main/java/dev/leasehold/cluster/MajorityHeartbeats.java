package dev.leasehold.cluster;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;

/**
 * Whether a leader has heard from a majority of the voters recently: Raft's rule for a leader
 * that must step down (thesis 6.2), on the figures Ratis reports in the leader's role info. The
 * leader counts itself; listeners, and followers no longer in the configuration, do not count.
 */
final class MajorityHeartbeats {

    private MajorityHeartbeats() {
    }

    /**
     * @param voters the ids of the current configuration's voters, the leader's own included
     * @param followers the leader's follower info: each follower's id and how long ago it last answered
     * @param limitMillis an answer older than this does not count ({@code election-timeout-max})
     * @return how many voters were heard from within the limit, the leader included
     */
    static long heard(Collection<String> voters, List<ServerRpcProto> followers, long limitMillis) {
        Set<String> ids = Set.copyOf(voters);
        Set<String> fresh = followers.stream()
                .filter(f -> f.getLastRpcElapsedTimeMs() <= limitMillis)
                .map(f -> f.getId().getId().toStringUtf8())
                .filter(ids::contains)
                .collect(Collectors.toSet());
        return 1 + fresh.size();
    }

    /** Whether {@code heard} voters are a majority of {@code voters}. */
    static boolean isMajority(long heard, int voters) {
        return heard >= voters / 2 + 1;
    }
}
