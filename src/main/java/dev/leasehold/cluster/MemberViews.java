package dev.leasehold.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;

import dev.leasehold.cluster.MemberView.Member;
import dev.leasehold.cluster.MemberView.Role;
import dev.leasehold.registry.NanoClock;

/**
 * What {@link Membership} reads: the members as the leader reports them (asked of the leader,
 * retried until the deadline), this node's copy of the configuration, and the Raft clients and
 * bounded polls a change is made with. Blocking: an admin thread only.
 */
final class MemberViews {

    private final RaftHost node;
    private final Parameters clientParameters;
    private final NanoClock clock;
    private final long rpcMillis;
    private final long timeoutMillis;

    MemberViews(RaftHost node, Parameters clientParameters, NanoClock clock, long rpcMillis, long timeoutMillis) {
        this.node = node;
        this.clientParameters = clientParameters;
        this.clock = clock;
        this.rpcMillis = rpcMillis;
        this.timeoutMillis = timeoutMillis;
    }

    static void pause() {
        try {
            // Only on ClusterEndpoint's own admin thread (membership changes run there, never on an
            // event loop), polling another node's progress: real time must pass.
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MembershipException(MembershipException.Kind.TIMEOUT, "interrupted", false);
        }
    }

    /** The leader's view, asked of the leader (retried until one answers or the deadline passes). */
    MemberView view(long deadline) {
        String lastError = "no leader known";
        while (true) {
            RaftPeerId leader = node.leader();
            if (leader != null) {
                try {
                    GroupInfoReply info = groupInfo(leader.toString(), deadline);
                    RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
                    if (info.isSuccess() && role != null && role.getRole() == RaftPeerRole.LEADER) {
                        return toView(leader.toString(), info);
                    }
                    lastError = leader + " is not leader (" + (role == null ? "?" : role.getRole()) + ")";
                } catch (MembershipException e) {
                    lastError = e.getMessage();
                }
            }
            if (clock.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "no leader answered: " + lastError
                        + "; try again once the cluster has a leader", false);
            }
            pause();
        }
    }

    GroupInfoReply groupInfo(String peer, long deadline) {
        RaftServer.Division local = node.division();
        List<RaftPeer> peers = new ArrayList<>(local == null ? List.of() : local.getRaftConf().getAllPeers());
        if (peers.isEmpty()) {
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "this node (" + node.settings().nodeId()
                    + ") is not a member yet; run the command on a member", false);
        }
        try (RaftClient c = client(RaftGroup.valueOf(RaftConfig.GROUP_ID, peers), null,
                Math.min(rpcMillis, Math.max(500, remainingMillis(deadline))))) {
            return c.getGroupManagementApi(RaftPeerId.valueOf(peer)).info(RaftConfig.GROUP_ID);
        } catch (IOException | RuntimeException e) {
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "cannot reach " + peer + ": "
                    + rootMessage(e), false);
        }
    }

    MemberView toView(String leader, GroupInfoReply info) {
        Conf conf = localConf();
        Map<String, Long> commits = new HashMap<>();
        info.getCommitInfos().forEach(c -> commits.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex()));
        Map<String, Long> contact = new HashMap<>();
        RaftProtos.RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasLeaderInfo()) {
            role.getLeaderInfo().getFollowerInfoList().forEach(f -> contact.put(f.getId().getId().toStringUtf8(),
                    f.getLastRpcElapsedTimeMs()));
        }
        Map<String, Long> matches = leader.equals(node.settings().nodeId()) ? localMatchIndexes() : Map.of();
        List<Member> members = new ArrayList<>();
        for (boolean listeners : new boolean[] {false, true}) {
            for (RaftPeer p : listeners ? conf.listeners() : conf.voters()) {
                String id = p.getId().toString();
                Role r = id.equals(leader) ? Role.LEADER : listeners ? Role.LISTENER : Role.VOTER;
                Member m = new Member(id, r, p.getAddress(), node.clientAddress(id).orElse(""),
                        commits.getOrDefault(id, -1L), matches.getOrDefault(id, -1L),
                        id.equals(leader) ? 0 : contact.getOrDefault(id, -1L));
                if (r == Role.LEADER) {
                    members.add(0, m);
                } else {
                    members.add(m);
                }
            }
        }
        return new MemberView(leader, role.getLeaderInfo().getTerm(), commits.getOrDefault(leader, -1L), members);
    }

    /**
     * Each follower's match index, when this node leads. Ratis gives the indexes as an array in the
     * order of the role info's followers, in two calls: a change between them shows as different
     * lengths, and then nothing is reported rather than an index under the wrong id.
     */
    Map<String, Long> localMatchIndexes() {
        RaftServer.Division d = node.division();
        if (d == null || !d.getInfo().isLeader()) {
            return Map.of(); // the role info of a division without a role yet cannot be built
        }
        RaftProtos.RoleInfoProto role = d.getInfo().getRoleInfoProto();
        long[] match = d.getInfo().getFollowerMatchIndices();
        if (match == null || !role.hasLeaderInfo() || role.getLeaderInfo().getFollowerInfoCount() != match.length) {
            return Map.of();
        }
        Map<String, Long> out = new HashMap<>();
        for (int i = 0; i < match.length; i++) {
            out.put(role.getLeaderInfo().getFollowerInfo(i).getId().getId().toStringUtf8(), match[i]);
        }
        return out;
    }

    /** A configuration as this node holds it: the exact peers, for compare-and-set. */
    record Conf(List<RaftPeer> voters, List<RaftPeer> listeners, boolean changing) {

        boolean has(String id, boolean asListener) {
            return (asListener ? listeners : voters).stream().anyMatch(p -> p.getId().toString().equals(id));
        }
    }

    /**
     * This node's configuration (a member adopts a configuration entry when it appends it, so
     * this is the leader's, or one a heartbeat behind: a stale one fails compare-and-set, never
     * applies).
     */
    Conf localConf() {
        RaftServer.Division d = node.division();
        if (d == null) {
            throw new MembershipException(MembershipException.Kind.UNAVAILABLE, "this node (" + node.settings().nodeId()
                    + ") is not a member yet; run the command on a member", false);
        }
        var c = d.getRaftConf();
        return new Conf(new ArrayList<>(c.getCurrentPeers(RaftPeerRole.FOLLOWER)),
                new ArrayList<>(c.getCurrentPeers(RaftPeerRole.LISTENER)), !c.getPreviousPeers().isEmpty());
    }

    /** The configuration once no change is in progress (joint consensus finished). */
    Conf stableConf(long deadline) {
        return awaitConf(c -> !c.changing(), "the end of the configuration change in progress", deadline);
    }

    Conf awaitConf(Predicate<Conf> ready, String what, long deadline) {
        while (true) {
            Conf c = localConf();
            if (ready.test(c) && !c.changing()) {
                return c;
            }
            if (clock.nanoTime() > deadline) {
                throw new MembershipException(MembershipException.Kind.TIMEOUT, "this node's configuration did not "
                        + "show " + what + " within " + timeoutMillis + " ms; run leasehold cluster members", true);
            }
            pause();
        }
    }

    static RaftGroup groupOf(MemberView v) {
        List<RaftPeer> peers = new ArrayList<>();
        for (Member m : v.members()) {
            peers.add(RaftPeer.newBuilder().setId(m.id()).setAddress(m.raftAddress()).build());
        }
        return RaftGroup.valueOf(RaftConfig.GROUP_ID, peers);
    }

    RaftClient client(RaftGroup group, RaftPeerId leader, long timeoutMs) {
        return client(group, leader, timeoutMs, RetryPolicies.noRetry());
    }

    /** A client that resends while the leader is changing, up to {@code deadline}. */
    RaftClient clientUntil(RaftGroup group, RaftPeerId leader, long deadline) {
        return client(group, leader, remainingMillis(deadline), new LeaderChangeRetry(deadline, clock::nanoTime));
    }

    RaftClient client(RaftGroup group, RaftPeerId leader, long timeoutMs, RetryPolicy retry) {
        RaftProperties p = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(Math.max(500, timeoutMs), TimeUnit.MILLISECONDS));
        RaftClient.Builder b = RaftClient.newBuilder().setProperties(p).setRaftGroup(group)
                .setParameters(clientParameters).setClientId(ClientId.randomId()).setRetryPolicy(retry);
        return (leader == null ? b : b.setLeaderId(leader)).build();
    }

    long remainingMillis(long deadline) {
        return Math.max(500, TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime()));
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
