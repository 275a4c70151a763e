package dev.leasehold.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's side of the {@link Roster}: while it serves as leader it starts the roster and
 * records every member that has stored the log; while its storage is empty it asks the group
 * about its own id. Runs on the cluster node's roles thread; at most one proposal in flight.
 */
final class RosterKeeper {

    private static final Logger LOG = LoggerFactory.getLogger(RosterKeeper.class);

    private final String selfId;
    private final LockStateMachine stateMachine;
    private final RaftGroup others;
    private final Parameters clientParameters;
    private final TimeDuration requestTimeout;
    /** In-process proposal to this node's own Raft server (only while it serves as leader). */
    private final Function<byte[], CompletableFuture<?>> submitAsLeader;

    private RaftClient client;
    /** Where {@link #askRemoved} waits for its answer: one daemon thread, never the roles thread. */
    private final ExecutorService asker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "leasehold-removal-query");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean inFlight;
    /** The start entry decided at promotion, until the roster is started. */
    private byte[] pendingStart;

    /**
     * @param group every member, this one included (the client talks to the others only: this
     *        node may have no group to answer with)
     */
    RosterKeeper(String selfId, RaftGroup group, LockStateMachine stateMachine, Parameters clientParameters,
            TimeDuration requestTimeout, Function<byte[], CompletableFuture<?>> submitAsLeader) {
        this.selfId = selfId;
        this.stateMachine = stateMachine;
        List<RaftPeer> peers = new ArrayList<>();
        for (RaftPeer p : group.getPeers()) {
            if (!p.getId().toString().equals(selfId)) {
                peers.add(p);
            }
        }
        this.others = RaftGroup.valueOf(group.getGroupId(), peers);
        this.clientParameters = clientParameters;
        this.requestTimeout = requestTimeout;
        this.submitAsLeader = submitAsLeader;
    }

    /**
     * A leader about to serve: if the roster is not started, decide how it starts. A table that has
     * never issued a token belongs to a new cluster, where only members that announce themselves
     * have stored anything; one that has belongs to a cluster older than the roster, where any
     * configured member may have.
     */
    void promoting(boolean tokensIssued, Collection<String> configuredMembers) {
        if (!stateMachine.rosterStarted() && pendingStart == null) {
            pendingStart = Roster.startEntry(tokensIssued ? configuredMembers : List.of());
            LOG.info("Starting the roster of members that have stored the log: {}", tokensIssued
                    ? "every configured member " + configuredMembers + " (the cluster issued tokens before it had one)"
                    : "empty (a new cluster: the leader records each member once it has stored the log)");
        }
    }

    /**
     * One step of a serving leader, a few times a second: propose what is missing, one entry at a
     * time: the start, then a record for each member that has stored the log. The leader itself
     * has; a follower has once it reports a commit index (only a member that stored entries can
     * commit one: a node without the group fails every append). Followers never propose.
     *
     * @param commitInfos the leader's view of each member's commit index (Ratis commit infos)
     */
    void tick(Collection<CommitInfoProto> commitInfos) {
        if (inFlight) {
            return;
        }
        if (stateMachine.rosterStarted()) {
            pendingStart = null;
        }
        if (pendingStart != null) {
            send(pendingStart);
            return;
        }
        if (!stateMachine.rosterHas(selfId)) {
            send(Roster.storedEntry(selfId));
            return;
        }
        for (CommitInfoProto c : commitInfos) {
            String id = c.getServer().getId().toStringUtf8();
            if (c.getCommitIndex() >= 0 && !stateMachine.rosterHas(id)) {
                send(Roster.storedEntry(id));
                return;
            }
        }
    }

    private void send(byte[] entry) {
        inFlight = true;
        CompletableFuture<?> f;
        try {
            f = submitAsLeader.apply(entry);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((r, e) -> {
            inFlight = false;
            if (e != null) {
                LOG.debug("Roster entry not committed (tried again): {}", e.toString());
            }
        });
    }

    /**
     * While this node's storage is empty: what the group says about its id, by a linearizable read
     * at the leader (bounded: a few tries of one request timeout each). UNKNOWN when there is no
     * answer: the caller asks again later.
     */
    Roster.Answer ask() {
        try {
            RaftClientReply r = client().io().sendReadOnly(
                    Message.valueOf(UnsafeByteOperations.unsafeWrap(Roster.query(selfId))));
            if (!r.isSuccess()) {
                LOG.debug("Roster query failed: {}", r.getException());
                return Roster.Answer.UNKNOWN;
            }
            return Roster.parseAnswer(r.getMessage().getContent().toByteArray());
        } catch (IOException | RuntimeException e) {
            LOG.debug("Roster query failed: {}", e.toString());
            return Roster.Answer.UNKNOWN;
        }
    }

    /**
     * Asks the group, by a linearizable read at the leader, whether this node's id was removed
     * ({@link Removal}): completes with true or false, or with null when there is no answer (no
     * leader, no reply within the client's few tries). The question runs on its own thread with
     * its own client, so the caller (the roles thread) never waits and a failed question leaves
     * nothing behind.
     */
    CompletableFuture<Boolean> askRemoved() {
        try {
            return CompletableFuture.supplyAsync(() -> {
                try (RaftClient c = newClient()) {
                    RaftClientReply r = c.io().sendReadOnly(Message.valueOf(UnsafeByteOperations.unsafeWrap(
                            Roster.removedQuery(selfId))));
                    if (!r.isSuccess()) {
                        LOG.debug("Removal query failed: {}", r.getException());
                        return null;
                    }
                    return Roster.parseRemoved(r.getMessage().getContent().toByteArray());
                } catch (IOException | RuntimeException e) {
                    LOG.debug("Removal query failed: {}", e.toString());
                    return null;
                }
            }, asker);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.completedFuture(null); // stopping
        }
    }

    private RaftClient client() {
        if (client == null) {
            client = newClient();
        }
        return client;
    }

    private RaftClient newClient() {
        RaftProperties p = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, requestTimeout);
        // A few tries: the first peer asked may be a follower that names the leader.
        return RaftClient.newBuilder().setProperties(p).setRaftGroup(others).setParameters(clientParameters)
                .setClientId(ClientId.randomId()).setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                        3, TimeDuration.valueOf(100, TimeUnit.MILLISECONDS))).build();
    }

    void close() {
        asker.shutdownNow();
        RaftClient c = client;
        client = null;
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                LOG.debug("Closing the roster client: {}", e.toString());
            }
        }
    }
}
