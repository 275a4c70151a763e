package dev.leasehold.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.leasehold.cluster.Command.Expire;
import dev.leasehold.cluster.Command.Extend;
import dev.leasehold.cluster.Command.Grant;
import dev.leasehold.cluster.Command.Release;
import dev.leasehold.cluster.Command.Value;
import dev.leasehold.cluster.ReplicatedTable.Outcome;
import dev.leasehold.protocol.HoldMode;
import dev.leasehold.registry.HeldGrant;

/**
 * Values in the replicated state (PROTOCOL.md 17.6): the table keeps each exclusive grant's value
 * (set by its grant or a {@code Value} command, kept by Extend, gone with the grant), log entries
 * with a value are format 4 while others keep 1 and 3, and snapshots are table format 5 while
 * formats 1 to 4 are still read.
 */
class ReplicatedValuesTests {

    static final byte[] K = "lead".getBytes(UTF_8);

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    /** The value of {@code key}'s first hold, as a new leader would install it, or null. */
    private static String valueOf(ReplicatedTable t, byte[] key) {
        for (HeldGrant h : t.held()) {
            if (java.util.Arrays.equals(h.key(), key)) {
                byte[] v = h.slots().get(0).value();
                return v == null ? null : new String(v, UTF_8);
            }
        }
        return null;
    }

    @Test
    void theTableKeepsAnExclusiveGrantsValueUntilTheGrantEnds() {
        ReplicatedTable t = new ReplicatedTable();
        assertThat(t.apply(new Grant(K, 5, 10, HoldMode.EXCLUSIVE, b("n1")))).isEqualTo(Outcome.GRANTED);
        assertThat(valueOf(t, K)).isEqualTo("n1");
        assertThat(t.apply(new Extend(K, 5, 20))).isEqualTo(Outcome.EXTENDED);
        assertThat(valueOf(t, K)).as("kept by Extend").isEqualTo("n1");
        assertThat(t.apply(new Value(K, 5, b("n2")))).isEqualTo(Outcome.VALUE_SET);
        assertThat(valueOf(t, K)).isEqualTo("n2");
        assertThat(t.apply(new Value(K, 6, b("x")))).as("not the active grant").isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Value(K, 5, new byte[0]))).as("vlen 0 clears").isEqualTo(Outcome.VALUE_SET);
        assertThat(valueOf(t, K)).isNull();
        t.apply(new Value(K, 5, b("n3")));
        assertThat(t.apply(new Release(K, 5))).isEqualTo(Outcome.RELEASED);
        assertThat(t.apply(new Value(K, 5, b("n4")))).as("after its Release").isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Grant(K, 7, 10))).isEqualTo(Outcome.GRANTED);
        assertThat(valueOf(t, K)).as("never passed to the next holder").isNull();
    }

    @Test
    void anExpiryIntoLockDelayDropsTheValueAndASharedGrantTakesNone() {
        ReplicatedTable t = new ReplicatedTable();
        t.apply(new Grant(K, 5, 10, HoldMode.EXCLUSIVE, b("n1")));
        assertThat(t.apply(new Expire(K, 5, 3))).isEqualTo(Outcome.EXPIRED);
        assertThat(valueOf(t, K)).isNull();
        assertThat(t.apply(new Value(K, 5, b("n2")))).isEqualTo(Outcome.NOT_HELD);
        byte[] cfg = b("cfg");
        t.apply(new Grant(cfg, 8, 10, HoldMode.READ));
        assertThat(t.apply(new Value(cfg, 8, b("x")))).as("no values on shared grants in 1.4").isEqualTo(Outcome.NOT_HELD);
        assertThat(valueOf(t, cfg)).isNull();
    }

    // ------------------------------------------------------------------ log entry format 4

    @Test
    void entriesWithAValueAreFormatFourAndRoundTrip() {
        byte[] withNewline = {'a', 0x0A, 'b'};
        List<Command> batch = List.of(new Grant(K, 1042, 15, HoldMode.EXCLUSIVE, b("n1")), new Grant(b("plain"), 1043, 30),
                new Grant(b("cfg"), 1044, 10, HoldMode.permits(4)), new Value(K, 1042, withNewline),
                new Value(K, 1042, new byte[0]), new Release(b("plain"), 1043));
        byte[] bytes = CommandCodec.encode(batch);
        assertThat(bytes[0]).isEqualTo(CommandCodec.VALUE_VERSION);
        List<Command> back = CommandCodec.decode(bytes);
        assertThat(back).hasSize(6);
        Grant g = (Grant) back.get(0);
        assertThat(g.token()).isEqualTo(1042);
        assertThat(g.leaseSeconds()).isEqualTo(15);
        assertThat(g.value()).isEqualTo(b("n1"));
        assertThat(((Grant) back.get(1)).value()).as("a grant without a value").isNull();
        assertThat(((Grant) back.get(2)).mode()).isEqualTo(HoldMode.permits(4));
        Value v = (Value) back.get(3);
        assertThat(v.key()).isEqualTo(K);
        assertThat(v.token()).isEqualTo(1042);
        assertThat(v.value()).isEqualTo(withNewline);
        assertThat(((Value) back.get(4)).value()).isEmpty();
        assertThat(back.get(5)).isInstanceOf(Release.class);
        assertThat(new String(back.get(5).key(), UTF_8)).isEqualTo("plain");
    }

    /** One entry's bytes, written by hand: format 4 is format 3 plus a value after each G and V row's key. */
    @Test
    void aFormatFourEntryHasTheDocumentedBytes() {
        byte[] bytes = CommandCodec.encode(List.of(new Value(K, 1042, b("n2")), new Grant(K, 1043, 15, HoldMode.EXCLUSIVE, b("n1"))));
        assertThat(HexFormat.of().formatHex(bytes)).isEqualTo("04" + "00000002"
                + "56" + "0000000000000412" + "00" + "0004" + "6c656164" + "0002" + "6e32"
                + "47" + "0000000000000413" + "0f" + "0004" + "6c656164" + "0002" + "6e31");
    }

    @Test
    void entriesWithoutAValueKeepFormatsOneAndThreeAndEveryFormatIsRead() {
        assertThat(CommandCodec.encode(List.of(new Grant(K, 1, 10), new Release(K, 1)))[0]).isEqualTo(CommandCodec.VERSION);
        assertThat(CommandCodec.encode(List.of(new Grant(K, 1, 10, HoldMode.EXCLUSIVE, new byte[0])))[0])
                .as("an empty value is none").isEqualTo(CommandCodec.VERSION);
        assertThat(CommandCodec.encode(List.of(new Grant(K, 1, 10, HoldMode.READ)))[0]).isEqualTo(CommandCodec.SHARED_VERSION);
        // Format 1 and format 3 bytes as earlier builds wrote them: no value field.
        byte[] one = HexFormat.of().parseHex("01" + "00000001" + "47" + "0000000000000007" + "1e" + "0004" + "6c656164");
        Grant g = (Grant) CommandCodec.decode(one).get(0);
        assertThat(g.token()).isEqualTo(7);
        assertThat(g.value()).isNull();
        byte[] three = HexFormat.of().parseHex("03" + "00000002" + "53" + "0000000000000008" + "0a" + "0004" + "0003"
                + "636667" + "47" + "0000000000000009" + "05" + "0004" + "6c656164");
        List<Command> back = CommandCodec.decode(three);
        assertThat(((Grant) back.get(0)).mode()).isEqualTo(HoldMode.permits(4));
        assertThat(((Grant) back.get(1)).token()).isEqualTo(9);
        assertThat(((Grant) back.get(1)).value()).isNull();
        // A V row is known only from format 4 on.
        byte[] valueInThree = HexFormat.of().parseHex("03" + "00000001" + "56" + "0000000000000412" + "00" + "0004"
                + "6c656164");
        assertThatThrownBy(() -> CommandCodec.decode(valueInThree)).hasMessageContaining("unknown command 86");
        assertThat(CommandCodec.readable(4)).isTrue();
        assertThat(CommandCodec.readable(5)).isFalse();
    }

    // ------------------------------------------------------------------ snapshot table format 5

    @Test
    void aFormatFiveSnapshotKeepsEachExclusiveHoldsValue() throws IOException {
        ReplicatedTable t = new ReplicatedTable();
        t.apply(new Grant(K, 3, 30, HoldMode.EXCLUSIVE, new byte[] {'a', 0x0A, 'b'}));
        t.apply(new Grant(b("plain"), 4, 30));
        t.apply(new Grant(b("d"), 5, 30, HoldMode.EXCLUSIVE, b("gone")));
        t.apply(new Expire(b("d"), 5, 5));
        t.apply(new Grant(b("r"), 6, 20, HoldMode.READ));
        t.apply(new Grant(b("r"), 7, 20, HoldMode.READ));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            t.writeTo(out);
        }
        assertThat(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())).readInt()).isEqualTo(5);
        ReplicatedTable copy = ReplicatedTableTests.roundTrip(t);
        assertThat(ReplicatedTableTests.canonical(copy)).isEqualTo(ReplicatedTableTests.canonical(t));
        assertThat(copy.held()).hasSize(4);
        assertThat(valueOf(copy, K)).isEqualTo("a\nb");
        assertThat(valueOf(copy, b("plain"))).isNull();
        assertThat(valueOf(copy, b("d"))).isNull();
        assertThat(copy.apply(new Value(K, 3, b("n2")))).isEqualTo(Outcome.VALUE_SET);
    }

    /** Snapshots of the build before values (table format 4: one row shape, no values) are still read. */
    @Test
    void aFormatFourSnapshotIsStillRead() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(4);
            out.writeLong(13); // counter
            out.writeLong(0); // rejected
            out.writeInt(2);
            formatFourRow(out, "x", 'X', 0, new long[] {3, 30, 0, 0});
            formatFourRow(out, "s", 'P', 4, new long[] {0, 0, 12, 9}, new long[] {13, 8, 0, 0});
        }
        ReplicatedTable t = ReplicatedTable.readFrom(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(ReplicatedTableTests.canonical(t))
                .isEqualTo("counter=13 rejected=0 {s=permits(4) [0/0/12/9, 13/8/0/0], x=exclusive [3/30/0/0]}");
        assertThat(valueOf(t, b("x"))).isNull();
        assertThat(t.apply(new Value(b("x"), 3, b("v")))).isEqualTo(Outcome.VALUE_SET);
        assertThat(valueOf(ReplicatedTableTests.roundTrip(t), b("x"))).isEqualTo("v");
    }

    /** One row as format 4 wrote it: key, mode byte and permits, the holds, and no value. */
    private static void formatFourRow(DataOutputStream out, String key, char mode, int permits, long[]... slots)
            throws IOException {
        byte[] k = key.getBytes(UTF_8);
        out.writeInt(k.length);
        out.write(k);
        out.writeByte(mode);
        out.writeShort(permits);
        out.writeInt(slots.length);
        for (long[] slot : slots) {
            out.writeLong(slot[0]);
            out.writeShort((int) slot[1]);
            out.writeLong(slot[2]);
            out.writeByte((int) slot[3]);
        }
    }
}
