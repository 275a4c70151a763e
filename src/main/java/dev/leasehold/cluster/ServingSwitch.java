package dev.leasehold.cluster;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.leasehold.cluster.RaftHost.ReadyLeader;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;

/**
 * The switch between serving (the ready leader, promoted) and not serving (PROTOCOL.md section 10).
 *
 * <h2>Promotion, in this order</h2>
 * <ol>
 * <li>Only a leader that Ratis reports ready (its first entry of the term is applied) and that has
 *     applied its whole log: until then it looks again every 10 ms.</li>
 * <li>The registry is emptied and loaded with every committed grant, each running for its longest
 *     requested lease plus {@code election-timeout-max} from now.</li>
 * <li>The roster's start is decided on that table, and a roster step runs, before the first batch
 *     of the term.</li>
 * <li>The proposer opens: tokens continue above the replicated counter, or above
 *     {@code initial-token} for a new cluster.</li>
 * <li>A new epoch starts; from here on lock requests are served. A session served in an older
 *     epoch is never served again: it gets {@code X 9}.</li>
 * </ol>
 *
 * <h2>Step-down</h2>
 * The epoch goes to 0 first (lock requests are refused from then on), the proposer closes, the
 * queued Acquires get {@code B} (they need no commit), every session gets {@code X 9}, and the
 * registry is emptied.
 *
 * <p>Runs on the node's roles thread only, except {@link #serving()} and {@link #servingEpoch()}.
 */
final class ServingSwitch {

    private static final Logger LOG = LoggerFactory.getLogger(ServingSwitch.class);

    /** Runs a task on the roles thread later. */
    @FunctionalInterface
    interface Later {
        void schedule(Runnable task, long delayMillis);
    }

    /** The node: whether it runs, whether it is the ready leader, and where it records that it leads. */
    private final RaftHost host;
    private final ClusterSettings settings;
    private final NanoClock clock;
    private final Proposer proposer;
    private final RosterKeeper roster;
    private final Supplier<LockStateMachine.Snapshot> table;
    private final Later later;

    private LockRegistry registry;
    private Runnable leadershipLost;
    /** The epoch this node serves in, 0 while it does not serve. */
    private volatile long servingEpoch;
    /** Epochs started so far; roles thread only. */
    private long epochs;

    /**
     * @param host the node: no promotion unless it runs and is the ready leader; it is marked the
     *     known leader just before it serves
     * @param table the committed table as applied now
     */
    ServingSwitch(RaftHost host, NanoClock clock, Proposer proposer, RosterKeeper roster,
            Supplier<LockStateMachine.Snapshot> table, Later later) {
        this.host = host;
        this.settings = host.settings();
        this.clock = clock;
        this.proposer = proposer;
        this.roster = roster;
        this.table = table;
        this.later = later;
    }

    /**
     * Wires the leader view and what ends the sessions served as leader ({@code X 9}).
     *
     * @param leadershipLost tells the protocol server that leadership is lost
     */
    void attach(LockRegistry registry, Runnable leadershipLost) {
        this.registry = registry;
        this.leadershipLost = leadershipLost;
    }

    boolean attached() {
        return registry != null && leadershipLost != null;
    }

    /** True while this node is the ready leader and has promoted: it serves lock requests. */
    boolean serving() {
        return servingEpoch != 0;
    }

    /** The epoch this node serves in, 0 while it does not serve. */
    long servingEpoch() {
        return servingEpoch;
    }

    /** Serve if this node is the ready leader and has applied its whole log. */
    void promoteIfReady() {
        if (!host.running() || serving() || host.removed()) {
            return;
        }
        ReadyLeader leader = host.readyLeader();
        if (leader == null) {
            return;
        }
        if (leader.appliedIndex() < leader.lastLogIndex()) {
            later.schedule(this::promoteIfReady, 10); // catching up
            return;
        }
        try {
            promote(leader);
        } catch (RuntimeException e) {
            // Nothing served yet (the epoch is set last): undo the half-done promotion and try again,
            // so a leader never stays unserving, and the failure is in the log, not in a discarded future.
            LOG.error("Node {}: promotion as leader (term {}) failed; trying again in 100 ms", settings.nodeId(),
                    leader.term(), e);
            proposer.close();
            registry.reset();
            later.schedule(this::promoteIfReady, 100);
        }
    }

    private void promote(ReadyLeader leader) {
        LockStateMachine.Snapshot now = table.get();
        long start = clock.nanoTime();
        registry.reset();
        registry.promote(now.held(), settings.electionTimeoutMax().toNanos());
        // Before the first batch of this term: a roster start decided on the table as applied now.
        roster.promoting(now.counter() > 0 || !now.held().isEmpty(), settings.peers().keySet());
        roster.tick(leader.commitInfos());
        long epoch = ++epochs; // a session from an older epoch is never served again: it gets X 9
        long above = Math.max(now.counter(), settings.initialToken()); // a new cluster's floor
        proposer.open(above);
        host.markSelfLeader();
        servingEpoch = epoch;
        LOG.info("Node {} serves as leader (term {}): {} grants promoted, tokens continue above {} ({} ms)",
                settings.nodeId(), leader.term(), now.held().size(), above,
                TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - start));
    }

    /** Stop serving, if serving. */
    void stepDown(String why) {
        if (!serving()) {
            return;
        }
        servingEpoch = 0; // from here on a lock request is refused: X 9 on a session served as leader
        proposer.close();
        registry.drain(); // B to queued Acquires (they need no commit)
        leadershipLost.run();
        registry.reset();
        LOG.info("Node {} stopped serving: {}", settings.nodeId(), why);
    }

    /**
     * A proposal failed: stop serving. Still leader? Serve again once every entry of the log is
     * applied (the failed batch may still commit), so the new view starts from the whole committed
     * state.
     */
    void proposalFailed(Throwable error) {
        if (!serving()) {
            return;
        }
        stepDown("a proposal failed: " + error);
        later.schedule(this::promoteIfReady, 50);
    }
}
