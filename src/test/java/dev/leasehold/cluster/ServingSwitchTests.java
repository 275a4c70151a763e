package dev.leasehold.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.registry.AcquireResult;
import dev.leasehold.registry.BusyReason;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.SessionHandle;

/**
 * The serving switch on values, without Ratis: when a leader promotes (ready, whole log applied),
 * what it does in which order (registry reset and loaded, roster start before the first batch,
 * tokens above the counter or the floor, a new epoch), and how it steps down (refuse first, B to
 * the queued, X 9, then empty). The roles thread is the test thread; tasks it would run later are
 * collected and run by hand.
 */
class ServingSwitchTests {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final NanoClock clock = now::get;
    /** Everything proposed to the log, in order: roster entries and the proposer's batches. */
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final Proposer proposer = new Proposer(bytes -> {
        log.add("batch of " + CommandCodec.decode(bytes).size());
        return new CompletableFuture<>();
    }, 256, 1, 1000, clock, nanos -> { }, failures::add);
    private final LockStateMachine stateMachine = new LockStateMachine(new NoEvents());
    private final List<Runnable> later = new ArrayList<>();
    private final List<Long> laterDelays = new ArrayList<>();
    private final List<String> events = new ArrayList<>();

    private RaftHost.ReadyLeader readyLeader;
    private LockStateMachine.Snapshot table = new LockStateMachine.Snapshot(List.of(), 0, null);
    /** When set, reading the table throws it (a promotion that fails half-way). */
    private RuntimeException tableFailure;
    private boolean running = true;
    private ServingSwitch serving;
    private LockRegistry registry;

    @AfterEach
    void stop() {
        proposer.stop();
    }

    private static ClusterSettings settings(long initialToken) {
        Map<String, ClusterSettings.Peer> peers = new LinkedHashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            peers.put(id, new ClusterSettings.Peer("127.0.0.1:1", "127.0.0.1:2"));
        }
        return new ClusterSettings("n1", peers, Path.of("unused"), Duration.ofMillis(1000), Duration.ofMillis(2000),
                256, 1, 1000, 1000, initialToken);
    }

    private void build(long initialToken) {
        ClusterSettings settings = settings(initialToken);
        List<RaftPeer> peers = settings.peers().keySet().stream()
                .map(id -> RaftPeer.newBuilder().setId(id).setAddress("127.0.0.1:1").build()).toList();
        RosterKeeper roster = new RosterKeeper("n1", RaftGroup.valueOf(RaftConfig.GROUP_ID, peers), stateMachine,
                new Parameters(), TimeDuration.ONE_SECOND, entry -> {
                    log.add("roster " + Arrays.toString(entry));
                    return new CompletableFuture<>();
                });
        serving = new ServingSwitch(new Host(settings), clock, proposer, roster, () -> {
            if (tableFailure != null) {
                throw tableFailure;
            }
            return table;
        }, (task, ms) -> {
            later.add(task);
            laterDelays.add(ms);
        });
        registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), clock, proposer, LeaseHorizon.UNBOUNDED,
                w -> { }, new RegistryObserver() { }, proposer);
        serving.attach(registry, () -> events.add("leadership lost, serving " + serving.serving()
                + ", draining " + registry.isDraining()));
        proposer.start();
    }

    private static RaftHost.ReadyLeader leader(long applied, long last) {
        return new RaftHost.ReadyLeader(3, applied, last, List.of());
    }

    private AcquireResult acquire(String key, long owner, SessionHandle session, int waitSeconds) {
        return registry.acquire(key.getBytes(UTF_8), HoldMode.EXCLUSIVE, waitSeconds * 1000L, 10, owner, clock.nanoTime(), session);
    }

    @Test
    void aNodeThatIsNotTheReadyLeaderDoesNotServe() {
        build(0);
        readyLeader = null;
        serving.promoteIfReady();
        assertThat(serving.serving()).isFalse();
        assertThat(serving.servingEpoch()).isZero();
        assertThat(later).as("nothing to wait for: Ratis calls again when this node leads").isEmpty();
        assertThat(log).isEmpty();
    }

    @Test
    void aLeaderServesOnlyOnceItHasAppliedItsWholeLog() {
        build(0);
        readyLeader = leader(9, 10);
        serving.promoteIfReady();
        assertThat(serving.serving()).as("one entry not applied yet").isFalse();
        assertThat(laterDelays).containsExactly(10L);
        assertThat(log).as("no roster entry, no batch before promotion").isEmpty();

        readyLeader = leader(10, 10);
        later.remove(0).run();
        assertThat(serving.serving()).isTrue();
        assertThat(serving.servingEpoch()).isEqualTo(1);
    }

    @Test
    void promotionStartsTheRosterBeforeTheFirstBatchAndContinuesTokensAboveTheCounter() {
        build(0);
        table = new LockStateMachine.Snapshot(List.of(), 41, null);
        readyLeader = leader(10, 10);
        serving.promoteIfReady();

        assertThat(events).as("the node names itself leader before it serves").containsExactly(
                "self leads, serving false");
        assertThat(log).as("a table that issued tokens: every configured member may have stored the log")
                .containsExactly("roster " + Arrays.toString(Roster.startEntry(List.of("n1", "n2", "n3"))));
        AcquireResult first = acquire("k", 1, new SessionHandle(), 0);
        assertThat(first).isEqualTo(new AcquireResult.Granted(42));
    }

    @Test
    void aNewClusterStartsAnEmptyRosterAndIssuesTokensAboveTheFloor() {
        build(1000);
        table = new LockStateMachine.Snapshot(List.of(), 0, null);
        readyLeader = leader(1, 1);
        serving.promoteIfReady();

        assertThat(log).containsExactly("roster " + Arrays.toString(Roster.startEntry(List.of())));
        assertThat(acquire("k", 1, new SessionHandle(), 0)).isEqualTo(new AcquireResult.Granted(1001));

        table = new LockStateMachine.Snapshot(List.of(), 1500, null);
        serving.stepDown("test");
        serving.promoteIfReady();
        assertThat(acquire("k", 1, new SessionHandle(), 0)).as("a counter above the floor wins")
                .isEqualTo(new AcquireResult.Granted(1501));
    }

    @Test
    void aPromotionThatFailsIsTriedAgainAndServesNothingMeanwhile() {
        build(0);
        readyLeader = leader(5, 5);
        tableFailure = new IllegalStateException("test: the table cannot be read");
        serving.promoteIfReady();
        assertThat(serving.serving()).isFalse();
        assertThat(laterDelays).as("tried again, not left for Ratis (which calls once per term)").containsExactly(100L);
        assertThat(acquire("k", 1, new SessionHandle(), 0)).as("the proposer stays closed")
                .isEqualTo(new AcquireResult.Busy(BusyReason.REPLICATION));

        tableFailure = null;
        later.remove(0).run();
        assertThat(serving.serving()).isTrue();
        assertThat(acquire("k", 1, new SessionHandle(), 0)).isEqualTo(new AcquireResult.Granted(1));
    }

    @Test
    void everyPromotionStartsANewEpoch() {
        build(0);
        readyLeader = leader(5, 5);
        serving.promoteIfReady();
        serving.promoteIfReady(); // already serving: nothing changes
        assertThat(serving.servingEpoch()).isEqualTo(1);
        serving.stepDown("test");
        assertThat(serving.servingEpoch()).isZero();
        serving.promoteIfReady();
        assertThat(serving.servingEpoch()).as("a session of epoch 1 is never served again").isEqualTo(2);
    }

    @Test
    void stepDownRefusesFirstAnswersTheQueuedThenEndsTheSessionsThenEmptiesTheRegistry() {
        build(0);
        readyLeader = leader(5, 5);
        serving.promoteIfReady();
        SessionHandle holder = new SessionHandle();
        assertThat(acquire("k", 1, holder, 0)).isInstanceOf(AcquireResult.Granted.class);
        AcquireResult queued = acquire("k", 2, new SessionHandle(), 30);
        assertThat(queued).isInstanceOf(AcquireResult.Queued.class);
        events.clear();

        serving.stepDown("test");

        assertThat(events).as("sessions end after the epoch is 0 and the queue is drained (B)").containsExactly(
                "leadership lost, serving false, draining true");
        assertThat(registry.heldKeys()).as("the registry is emptied after").isZero();
        assertThat(registry.isDraining()).isFalse();
        assertThat(acquire("j", 3, new SessionHandle(), 0)).as("the proposer is closed: nothing is granted")
                .isEqualTo(new AcquireResult.Busy(BusyReason.REPLICATION));
    }

    @Test
    void stepDownWhileNotServingDoesNothing() {
        build(0);
        serving.stepDown("test");
        assertThat(events).isEmpty();
    }

    @Test
    void aFailedProposalStepsDownAndTriesToServeAgainFromTheWholeLog() {
        build(0);
        readyLeader = leader(5, 5);
        serving.promoteIfReady();
        serving.proposalFailed(new IllegalStateException("not committed"));
        assertThat(serving.serving()).isFalse();
        assertThat(laterDelays).containsExactly(50L);

        readyLeader = leader(6, 7); // the failed batch is in the log, not applied yet
        later.remove(0).run();
        assertThat(serving.serving()).isFalse();
        readyLeader = leader(7, 7);
        later.remove(0).run();
        assertThat(serving.servingEpoch()).isEqualTo(2);
    }

    @Test
    void aStoppedNodeNeverPromotes() {
        build(0);
        running = false;
        readyLeader = leader(5, 5);
        serving.promoteIfReady();
        assertThat(serving.serving()).isFalse();
    }

    /**
     * The node as the switch sees it: the test's {@code running} and {@code readyLeader}, and an
     * event when the switch marks it the known leader. No Raft server: the switch never asks for one.
     */
    private final class Host implements RaftHost {
        private final ClusterSettings settings;

        Host(ClusterSettings settings) {
            this.settings = settings;
        }

        @Override
        public ClusterSettings settings() {
            return settings;
        }

        @Override
        public RaftPeerId selfId() {
            return RaftPeerId.valueOf(settings.nodeId());
        }

        @Override
        public RaftServer server() {
            return null;
        }

        @Override
        public RaftServer.Division division() {
            return null;
        }

        @Override
        public RaftPeerId leader() {
            return null;
        }

        @Override
        public boolean running() {
            return running;
        }

        @Override
        public ReadyLeader readyLeader() {
            return readyLeader;
        }

        @Override
        public void markSelfLeader() {
            events.add("self leads, serving " + serving.serving());
        }

        @Override
        public Optional<String> clientAddress(String memberId) {
            return Optional.empty();
        }

        @Override
        public void admitAddedMembers() {
        }
    }

    private static final class NoEvents implements LockStateMachine.Listener {
        @Override
        public void leaderReady() {
        }

        @Override
        public void leaderChanged(RaftPeerId leader) {
        }

        @Override
        public void notLeader() {
        }

        @Override
        public void logFailed(Throwable cause) {
        }

        @Override
        public void unknownFormat(String message) {
        }
    }
}
