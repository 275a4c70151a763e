package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.util.List;

import org.junit.jupiter.api.Test;


/** The replicated roster of members that have stored the log: entries, answers, snapshots. */
class RosterTests {

    private final Roster roster = new Roster();

    @Test
    void unknownUntilALeaderStartsItThenNeverStoredUnlessRecorded() {
        assertThat(roster.answer("n3")).isEqualTo(Roster.Answer.UNKNOWN);
        roster.apply(Roster.storedEntry("n1")); // may commit before the start: the start adds, never replaces
        assertThat(roster.answer("n1")).isEqualTo(Roster.Answer.STORED);
        assertThat(roster.answer("n3")).as("not started yet").isEqualTo(Roster.Answer.UNKNOWN);
        roster.apply(Roster.startEntry(List.of()));
        assertThat(roster.answer("n3")).isEqualTo(Roster.Answer.NEVER_STORED);
        assertThat(roster.answer("n1")).isEqualTo(Roster.Answer.STORED);
        roster.apply(Roster.storedEntry("n3"));
        assertThat(roster.answer("n3")).isEqualTo(Roster.Answer.STORED);
        assertThat(roster.ids()).containsExactlyInAnyOrder("n1", "n3");
    }

    @Test
    void aClusterOlderThanTheRosterStartsItWithEveryConfiguredMember() {
        roster.apply(Roster.startEntry(List.of("n2", "n1", "n3")));
        assertThat(roster.answer("n2")).isEqualTo(Roster.Answer.STORED);
        assertThat(roster.answer("n4")).isEqualTo(Roster.Answer.NEVER_STORED);
    }

    @Test
    void queriesAndAnswersRoundTripAsBytes() {
        roster.apply(Roster.startEntry(List.of("n1")));
        assertThat(Roster.parseAnswer(roster.answer(Roster.query("n1")))).isEqualTo(Roster.Answer.STORED);
        assertThat(Roster.parseAnswer(roster.answer(Roster.query("n2")))).isEqualTo(Roster.Answer.NEVER_STORED);
        assertThatThrownBy(() -> roster.answer(new byte[] {'X'})).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRemovedIdIsAnsweredAsRemovedAndNoOtherIs() {
        roster.apply(Roster.startEntry(List.of("n1", "n2")));
        roster.apply(Roster.removedEntry("n2"));
        assertThat(Roster.parseRemoved(roster.answer(Roster.removedQuery("n2")))).isTrue();
        assertThat(Roster.parseRemoved(roster.answer(Roster.removedQuery("n1")))).isFalse();
        assertThat(Roster.parseRemoved(roster.answer(Roster.removedQuery("n7")))).isFalse();
        assertThat(Roster.parseAnswer(roster.answer(Roster.query("n2")))).as("never formats again")
                .isEqualTo(Roster.Answer.STORED);
    }

    @Test
    void entriesAreToldApartFromCommandBatchesByTheirFirstByte() {
        assertThat(Roster.storedEntry("n1")[0]).isEqualTo(Roster.ENTRY).isNotEqualTo(CommandCodec.VERSION);
        assertThat(CommandCodec.encode(List.of())[0]).isEqualTo(CommandCodec.VERSION);
        assertThatThrownBy(() -> roster.apply(new byte[] {Roster.ENTRY, 'Z'}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown roster entry kind");
    }

    @Test
    void aSnapshotKeepsTheRosterAfterTheTableAndAnOlderSnapshotHasNone() throws Exception {
        roster.apply(Roster.startEntry(List.of()));
        roster.apply(Roster.storedEntry("n2"));
        Roster read = readBack(snapshot(roster));
        assertThat(read.started()).isTrue();
        assertThat(read.ids()).containsExactly("n2");
        ByteArrayOutputStream older = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(older)) {
            new ReplicatedTable().writeTo(out);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(older.toByteArray()))) {
            ReplicatedTable.readFrom(in);
            Roster none = Roster.readFrom(in);
            assertThat(none.started()).isFalse();
            assertThat(none.answer("n1")).isEqualTo(Roster.Answer.UNKNOWN);
        }
    }

    @Test
    void membersAddedOnlineKeepTheirAddressesAndARemovedIdIsNeverNew() throws Exception {
        roster.apply(Roster.startEntry(List.of()));
        roster.apply(Roster.addressesEntry("n4", "10.0.0.4:7430", "10.0.0.4:7420", "uri:spiffe://x/n4"));
        assertThat(roster.directory()).containsEntry("n4", new Roster.Addresses("10.0.0.4:7430", "10.0.0.4:7420", "uri:spiffe://x/n4"));
        assertThat(roster.answer("n4")).as("added, not stored yet").isEqualTo(Roster.Answer.NEVER_STORED);
        roster.apply(Roster.removedEntry("n2"));
        assertThat(roster.removed("n2")).isTrue();
        assertThat(roster.answer("n2")).as("a removed id may never format and join").isEqualTo(Roster.Answer.STORED);

        Roster read = readBack(snapshot(roster));
        assertThat(read.directory()).isEqualTo(roster.directory());
        assertThat(read.removed("n2")).isTrue();
        assertThat(read.removed("n4")).isFalse();
    }

    @Test
    void aSnapshotFromBeforeOnlineChangesHasAnEmptyDirectory() throws Exception {
        roster.apply(Roster.startEntry(List.of("n1")));
        byte[] all = snapshot(roster);
        // The roster part as the previous build wrote it: magic, started, ids; no directory section.
        int cut = all.length - (4 + 4 + 4);
        Roster read = readBack(java.util.Arrays.copyOf(all, cut));
        assertThat(read.ids()).containsExactly("n1");
        assertThat(read.directory()).isEmpty();
    }

    /** A snapshot as the state machine writes it: an empty table, then {@code r}. */
    private static byte[] snapshot(Roster r) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            new ReplicatedTable().writeTo(out);
            r.writeTo(out);
        }
        return bytes.toByteArray();
    }

    /** The roster part of a snapshot, read as the state machine reads it. */
    private static Roster readBack(byte[] snapshot) throws Exception {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(snapshot))) {
            ReplicatedTable.readFrom(in);
            return Roster.readFrom(in);
        }
    }
}
