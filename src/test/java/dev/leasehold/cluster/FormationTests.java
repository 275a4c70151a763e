package dev.leasehold.cluster;

import static dev.leasehold.cluster.Formation.Decision.BOOTSTRAP;
import static dev.leasehold.cluster.Formation.Decision.REFUSE;
import static dev.leasehold.cluster.Formation.Decision.WAIT;
import static dev.leasehold.cluster.Formation.PeerState.EMPTY;
import static dev.leasehold.cluster.Formation.PeerState.FORMED;
import static dev.leasehold.cluster.Formation.PeerState.FORMING;
import static dev.leasehold.cluster.Formation.PeerState.UNREACHABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk-loss guard's decision (docs/cluster.md "When a disk is lost") on given probe answers. */
class FormationTests {

    private final Formation f = new Formation(Set.of("n2", "n3"));

    @Test
    void aBrandNewClusterFormsOnceEveryPeerWasSeenWithoutData() {
        assertThat(f.observe("n2", EMPTY)).isEqualTo(WAIT);
        assertThat(f.observe("n3", UNREACHABLE)).isEqualTo(WAIT);
        assertThat(f.observe("n2", EMPTY)).isEqualTo(WAIT);
        assertThat(f.observe("n3", EMPTY)).isEqualTo(BOOTSTRAP);
    }

    @Test
    void aPeerThatJustFormattedStillCountsAsForming() {
        f.observe("n2", FORMING);
        assertThat(f.observe("n3", EMPTY)).isEqualTo(BOOTSTRAP);
    }

    @Test
    void aPeerWithDataSendsTheQuestionToTheRosterWhoseStoredAnswerRefusesForGood() {
        f.observe("n2", EMPTY);
        assertThat(f.observe("n3", FORMED)).isEqualTo(WAIT);
        assertThat(f.needsRoster()).isTrue();
        assertThat(f.formedBy()).isEqualTo("n3");
        assertThat(f.roster(Roster.Answer.UNKNOWN)).as("no leader answered: ask again").isEqualTo(WAIT);
        assertThat(f.observe("n2", EMPTY)).as("a peer seen unformed does not undo the formed one").isEqualTo(WAIT);
        assertThat(f.roster(Roster.Answer.STORED)).isEqualTo(REFUSE);
        assertThat(f.needsRoster()).isFalse();
        assertThat(f.observe("n3", EMPTY)).as("final").isEqualTo(REFUSE);
        assertThat(f.roster(Roster.Answer.NEVER_STORED)).as("final").isEqualTo(REFUSE);
    }

    @Test
    void aFoundingMemberThatCameLateJoinsWhenTheRosterNeverSawItStore() {
        // n2 and n3 saw this node without a group and formed without it; its first look finds data.
        assertThat(f.observe("n2", FORMED)).isEqualTo(WAIT);
        assertThat(f.observe("n3", FORMED)).isEqualTo(WAIT);
        assertThat(f.roster(Roster.Answer.NEVER_STORED)).isEqualTo(BOOTSTRAP);
        assertThat(f.roster(Roster.Answer.STORED)).as("final").isEqualTo(BOOTSTRAP);
    }

    @Test
    void theRosterIsNotAskedWhileNoPeerHoldsData() {
        f.observe("n2", EMPTY);
        assertThat(f.needsRoster()).isFalse();
        assertThat(f.roster(Roster.Answer.NEVER_STORED)).as("says nothing before a formed peer").isEqualTo(WAIT);
        assertThat(f.roster(Roster.Answer.STORED)).isEqualTo(WAIT);
    }

    @Test
    void aBootstrapDecisionIsFinalToo() {
        f.observe("n2", EMPTY);
        f.observe("n3", EMPTY);
        // The others then form and commit: that is this very formation, not a lost disk.
        assertThat(f.observe("n2", FORMED)).isEqualTo(BOOTSTRAP);
        assertThat(f.lastSeen()).containsEntry("n2", FORMED);
    }

    @Test
    void aOneMemberGroupHasNobodyToAsk() {
        assertThat(new Formation(Set.of()).decision()).isEqualTo(BOOTSTRAP);
    }

    @Test
    void onlyConfiguredPeersCount() {
        assertThatThrownBy(() -> f.observe("n9", EMPTY)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("n9");
    }

    @Test
    void storageIsThereOnceRatisWroteItsMetaFile(@TempDir Path dir) throws Exception {
        String group = "2ab8a1c8-4c3e-3a1e-8b7e-0f1d2c3b4a59";
        assertThat(Formation.hasStorage(dir.resolve("raft"), group)).isFalse();
        assertThat(Formation.isEmptyDir(dir.resolve("raft"))).isTrue();
        Path current = Files.createDirectories(dir.resolve("raft").resolve(group).resolve("current"));
        assertThat(Formation.hasStorage(dir.resolve("raft"), group)).as("a directory Ratis did not format").isFalse();
        Files.writeString(current.resolve("raft-meta"), "term=1");
        assertThat(Formation.hasStorage(dir.resolve("raft"), group)).isTrue();
        assertThat(Formation.isEmptyDir(dir.resolve("raft"))).isFalse();
    }
}
