package dev.leasehold.cluster;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.apache.ratis.server.protocol.TermIndex;

import dev.leasehold.protocol.TokenFloorSnapshot;

/**
 * A cluster node's token-floor snapshot (docs/cluster.md "Backup and restore of the token floor"):
 * taken only on the serving leader, from its committed and applied table (the replicated counter
 * at the applied term and index) and the last token it issued, whichever is higher, and never
 * below {@code initial-token}. Only the serving leader issues tokens, and a client sees a token
 * only once its grant committed, so the floor bounds every token any client has seen.
 */
final class FloorSnapshots {

    private final ClusterSettings settings;
    private final LockStateMachine stateMachine;
    private final Proposer proposer;
    private final ServingSwitch serving;
    private final Removal removal;

    FloorSnapshots(ClusterSettings settings, LockStateMachine stateMachine, Proposer proposer, ServingSwitch serving,
            Removal removal) {
        this.settings = settings;
        this.stateMachine = stateMachine;
        this.proposer = proposer;
        this.serving = serving;
        this.removal = removal;
    }

    /**
     * @param leaderHint what this node says of the leader ({@code leader=host:port}, empty, or why not a member)
     * @throws IllegalStateException when this node is not the serving leader, saying where to ask
     */
    TokenFloorSnapshot take(Instant now, String leaderHint) {
        if (!serving.serving()) {
            throw new IllegalStateException("node " + settings.nodeId() + " is not the serving leader ("
                    + (leaderHint.isEmpty() ? "no leader known now" : leaderHint) + "): take the snapshot on the "
                    + "leader, whose committed state bounds every token the cluster issued");
        }
        LockStateMachine.Snapshot table = stateMachine.read();
        long floor = Math.max(Math.max(table.counter(), proposer.lastIssued()), settings.initialToken());
        TermIndex applied = table.applied();
        List<String> roster = new ArrayList<>(removal.members());
        return new TokenFloorSnapshot("cluster", settings.nodeId(), now, applied == null ? 0 : applied.getTerm(),
                applied == null ? 0 : Math.max(0, applied.getIndex()), floor, roster);
    }
}
