package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftConfiguration;
import org.junit.jupiter.api.Test;

/**
 * How a node learns that it was removed (PROTOCOL.md section 10, "A removed node"): from its own
 * configuration and log, from its roster, or by asking the group; and which members a leader
 * hint may name. The clock is moved by hand; the group's answers are futures the test completes.
 */
class RemovalTests {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final List<String> removedWhy = new ArrayList<>();
    private final List<Runnable> later = new ArrayList<>();
    private final Removal removal = new Removal("n2", now::get, later::add, removedWhy::add);
    private final List<CompletableFuture<Boolean>> asked = new ArrayList<>();

    @Test
    void aMemberOfAStableConfigurationWithALeaderNeitherAsksNorIsRemoved() {
        check(conf(List.of("n1", "n2", "n3"), List.of(), 5), 10, Set.of(), true);
        assertThat(asked).isEmpty();
        assertThat(removal.reason()).isNull();
        assertThat(removal.members()).containsExactlyInAnyOrder("n1", "n2", "n3");
    }

    @Test
    void aConfigurationThatDoesNotNameItOnlyMakesItAsk() {
        // A member added online replays older configurations, none of which names it, while it catches up.
        check(conf(List.of("n1", "n3"), List.of(), 7), 8, Set.of(), true);
        check(conf(List.of("n1", "n3", "n4"), List.of("n1", "n3"), 9), 10, Set.of(), true);
        assertThat(removal.reason()).as("no conclusion from a configuration that never named it").isNull();
        assertThat(asked).as("it asks the group").hasSize(1);
        asked.get(0).complete(false);
        runLater();
        assertThat(removal.reason()).isNull();
        assertThat(removedWhy).isEmpty();
    }

    @Test
    void aJointConfigurationCountsOnlyOnceItsEntryIsCommittedHereOrTheGroupSaysSo() {
        RaftConfiguration joint = conf(List.of("n1", "n3"), List.of("n1", "n2", "n3"), 9);
        check(joint, 8, Set.of(), true);
        assertThat(removal.reason()).as("not committed yet here").isNull();
        assertThat(asked).as("it asks the group").hasSize(1);
        check(joint, 8, Set.of(), true);
        assertThat(asked).as("one question at a time").hasSize(1);
        asked.get(0).complete(null); // no answer (no leader)
        runLater();
        check(joint, 8, Set.of(), true);
        assertThat(asked).as("not again before the pause").hasSize(1);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(Removal.ASK_EVERY_MILLIS));
        check(joint, 8, Set.of(), true);
        assertThat(asked).hasSize(2);
        asked.get(1).complete(true);
        runLater();
        assertThat(removal.reason()).contains("leader answers");

        Removal other = new Removal("n2", now::get, later::add, removedWhy::add);
        other.check(joint, 9, Set.of(), true, () -> CompletableFuture.completedFuture(false));
        assertThat(other.reason()).as("the joint entry committed in its own log").contains("leaves it out");
    }

    @Test
    void aNodeWithoutALeaderAsksAndAFalseAnswerKeepsItAMember() {
        check(conf(List.of("n1", "n2", "n3"), List.of(), 5), 10, Set.of(), false);
        assertThat(asked).hasSize(1);
        asked.get(0).complete(false);
        runLater();
        assertThat(removal.reason()).isNull();
        assertThat(removedWhy).isEmpty();
    }

    @Test
    void theRosterRecordIsEnoughAndRemovedIdsAreNeverHintedAt() {
        check(conf(List.of("n1", "n2", "n3"), List.of(), 5), 10, Set.of("n3"), true);
        assertThat(removal.members()).as("n3 removed: never named as leader").containsExactlyInAnyOrder("n1", "n2");
        assertThat(removal.reason()).isNull();
        check(conf(List.of("n1", "n2", "n3"), List.of(), 5), 10, Set.of("n2", "n3"), true);
        assertThat(removal.reason()).contains("roster");
    }

    @Test
    void aListenerIsAMember() {
        check(conf(List.of("n1", "n3"), List.of(), 5, List.of("n2")), 10, Set.of(), true);
        assertThat(removal.reason()).isNull();
        assertThat(removal.members()).as("a listener never leads").containsExactlyInAnyOrder("n1", "n3");
    }

    @Test
    void theHintNamesOnlyACurrentVoterOtherThanItselfAndNothingOnceRemoved() {
        java.util.function.Function<String, java.util.Optional<String>> address =
                id -> java.util.Optional.of("127.0.0.1:" + id.substring(1));
        assertThat(removal.hint("n1", address)).as("no configuration yet: not filtered").isEqualTo("leader=127.0.0.1:1");
        check(conf(List.of("n1", "n2", "n3"), List.of(), 5), 10, Set.of("n3"), true);
        assertThat(removal.hint("n1", address)).isEqualTo("leader=127.0.0.1:1");
        assertThat(removal.hint("n2", address)).as("never itself").isEmpty();
        assertThat(removal.hint("n3", address)).as("removed").isEmpty();
        assertThat(removal.hint("n9", address)).as("not in the configuration").isEmpty();
        assertThat(removal.hint(null, address)).isEmpty();
        check(conf(List.of("n1", "n3"), List.of("n1", "n2", "n3"), 7), 8, Set.of(), true);
        assertThat(removal.hint("n1", address)).isEqualTo(Removal.NOT_A_MEMBER).doesNotContain("leader=");
    }

    private void check(RaftConfiguration conf, long committed, Set<String> removedIds, boolean leaderKnown) {
        removal.check(conf, committed, removedIds, leaderKnown, () -> {
            CompletableFuture<Boolean> f = new CompletableFuture<>();
            asked.add(f);
            return f;
        });
    }

    private void runLater() {
        List<Runnable> tasks = new ArrayList<>(later);
        later.clear();
        tasks.forEach(Runnable::run);
    }

    private static RaftConfiguration conf(List<String> voters, List<String> previous, long index) {
        return conf(voters, previous, index, List.of());
    }

    private static RaftConfiguration conf(List<String> voters, List<String> previous, long index,
            List<String> listeners) {
        return new RaftConfiguration() {
            @Override
            public RaftPeer getPeer(RaftPeerId id, RaftPeerRole... roles) {
                return null;
            }

            @Override
            public Collection<RaftPeer> getAllPeers(RaftPeerRole role) {
                return getCurrentPeers(role);
            }

            @Override
            public Collection<RaftPeer> getCurrentPeers(RaftPeerRole role) {
                return peers(role == RaftPeerRole.LISTENER ? listeners : voters);
            }

            @Override
            public Collection<RaftPeer> getPreviousPeers(RaftPeerRole role) {
                return role == RaftPeerRole.LISTENER ? List.of() : peers(previous);
            }

            @Override
            public long getLogEntryIndex() {
                return index;
            }
        };
    }

    private static List<RaftPeer> peers(List<String> ids) {
        return ids.stream().map(id -> RaftPeer.newBuilder().setId(id).build()).toList();
    }
}
