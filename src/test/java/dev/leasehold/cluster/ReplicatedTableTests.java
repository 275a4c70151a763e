package dev.leasehold.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.cluster.Command.Expire;
import dev.leasehold.cluster.Command.Extend;
import dev.leasehold.cluster.Command.Grant;
import dev.leasehold.cluster.Command.Release;
import dev.leasehold.cluster.ReplicatedTable.Outcome;
import dev.leasehold.registry.HeldGrant;

/**
 * The cluster's apply function (PROTOCOL.md section 10): random command logs, as a leader (and
 * now and then a confused one) would write them, applied to several copies. Seeded: the seed is
 * printed, {@code -Dleasehold.seed=N} reruns one.
 */
class ReplicatedTableTests {

    private static final long SEED = Long.getLong("leasehold.seed", System.nanoTime());

    @Test
    void threeCopiesApplyingTheSameLogAreIdentical() {
        System.out.println("ReplicatedTableTests seed " + SEED + " (rerun with -Dleasehold.seed=" + SEED + ")");
        for (int round = 0; round < 50; round++) {
            List<Command> log = randomLog(new Random(SEED + round), 2_000);
            ReplicatedTable a = new ReplicatedTable();
            ReplicatedTable b = new ReplicatedTable();
            ReplicatedTable c = new ReplicatedTable();
            for (Command cmd : log) {
                Outcome oa = a.apply(cmd);
                assertThat(b.apply(cmd)).as("seed %d round %d", SEED, round).isEqualTo(oa);
                assertThat(c.apply(cmd)).isEqualTo(oa);
            }
            assertThat(canonical(b)).isEqualTo(canonical(a));
            assertThat(canonical(c)).isEqualTo(canonical(a));
        }
    }

    @Test
    void aSnapshotPlusTheRestOfTheLogEqualsTheFullReplay() throws IOException {
        for (int round = 0; round < 50; round++) {
            Random random = new Random(SEED + 1000 + round);
            List<Command> log = randomLog(random, 2_000);
            int cut = random.nextInt(log.size());
            ReplicatedTable full = new ReplicatedTable();
            ReplicatedTable prefix = new ReplicatedTable();
            for (int i = 0; i < log.size(); i++) {
                full.apply(log.get(i));
                if (i < cut) {
                    prefix.apply(log.get(i));
                }
            }
            ReplicatedTable restored = roundTrip(prefix);
            assertThat(canonical(restored)).isEqualTo(canonical(prefix));
            for (int i = cut; i < log.size(); i++) {
                restored.apply(log.get(i));
            }
            assertThat(canonical(restored)).as("seed %d round %d cut %d", SEED, round, cut).isEqualTo(canonical(full));
        }
    }

    @Test
    void grantedTokensOnlyGrowAndTheCounterNeverGoesBack() {
        Random random = new Random(SEED + 7);
        ReplicatedTable t = new ReplicatedTable();
        long lastGranted = 0;
        long highestLogged = 0;
        long counter = 0;
        for (Command cmd : randomLog(random, 20_000)) {
            Outcome o = t.apply(cmd);
            if (o == Outcome.GRANTED) {
                assertThat(cmd.token()).isGreaterThan(lastGranted);
                lastGranted = cmd.token();
            }
            if (cmd.kind() == Command.Kind.GRANT) {
                highestLogged = Math.max(highestLogged, cmd.token());
            }
            assertThat(t.counter()).isGreaterThanOrEqualTo(counter);
            counter = t.counter();
        }
        assertThat(t.counter()).as("every logged grant's token, applied or rejected").isEqualTo(highestLogged);
    }

    @Test
    void aGrantOnAHeldKeyIsRejectedAndChangesNothing() {
        ReplicatedTable t = new ReplicatedTable();
        byte[] k = "k".getBytes(UTF_8);
        assertThat(t.apply(new Grant(k, 5, 10))).isEqualTo(Outcome.GRANTED);
        assertThat(t.apply(new Grant(k, 6, 10))).isEqualTo(Outcome.REJECTED);
        assertThat(t.rejected()).isEqualTo(1);
        assertThat(t.held()).singleElement().satisfies(h -> assertThat(h.slots().get(0).token()).isEqualTo(5));
        assertThat(t.apply(new Release(k, 6))).isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Expire(k, 6))).isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Extend(k, 5, 60))).isEqualTo(Outcome.EXTENDED);
        assertThat(t.held().get(0).slots().get(0).maxLeaseSeconds()).isEqualTo(60);
        assertThat(t.apply(new Extend(k, 5, 20))).isEqualTo(Outcome.EXTENDED);
        assertThat(t.held().get(0).slots().get(0).maxLeaseSeconds()).as("the longest lease requested stays").isEqualTo(60);
        assertThat(t.apply(new Expire(k, 5))).isEqualTo(Outcome.EXPIRED);
        assertThat(t.size()).isZero();
        assertThat(t.counter()).as("past the rejected grant's token: it may have been answered").isEqualTo(6);
    }

    /** PROTOCOL.md section 12: an expiry with lock-delay keeps the key (as a duration) until the delay's end. */
    @Test
    void anExpiryWithLockDelayKeepsTheKeyUntilTheDelayEnds() throws IOException {
        ReplicatedTable t = new ReplicatedTable();
        byte[] k = "k".getBytes(UTF_8);
        t.apply(new Grant(k, 5, 10));
        assertThat(t.apply(new Expire(k, 5, 15))).isEqualTo(Outcome.EXPIRED);
        assertThat(t.held()).singleElement().satisfies(h -> {
            assertThat(h.slots().get(0).token()).as("no grant").isZero();
            assertThat(h.slots().get(0).delayedToken()).isEqualTo(5);
            assertThat(h.slots().get(0).delaySeconds()).isEqualTo(15);
        });
        assertThat(t.apply(new Release(k, 5))).isEqualTo(Outcome.NOT_HELD);
        ReplicatedTable copy = roundTrip(t);
        assertThat(canonical(copy)).as("snapshot format 2 keeps the delay").isEqualTo(canonical(t));
        assertThat(t.apply(new Expire(k, 4, 0))).as("another token's delay end").isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Expire(k, 5, 0))).isEqualTo(Outcome.DELAY_ENDED);
        assertThat(t.size()).isZero();
        assertThat(copy.apply(new Grant(k, 6, 10))).as("a grant ends a delay too").isEqualTo(Outcome.GRANTED);
        assertThat(copy.held()).singleElement().satisfies(h -> assertThat(h.slots().get(0).delayedToken()).isZero());
    }

    /** Snapshots written before lock-delay (format 1) are still read. */
    @Test
    void aFormatOneSnapshotIsStillRead() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(1);
            out.writeLong(42); // counter
            out.writeLong(0); // rejected
            out.writeInt(1);
            byte[] k = "orders/42".getBytes(UTF_8);
            out.writeInt(k.length);
            out.write(k);
            out.writeLong(41);
            out.writeShort(30);
        }
        ReplicatedTable t = ReplicatedTable.readFrom(new java.io.DataInputStream(
                new java.io.ByteArrayInputStream(bytes.toByteArray())));
        assertThat(t.counter()).isEqualTo(42);
        assertThat(canonical(t)).isEqualTo("counter=42 rejected=0 {orders/42=exclusive [41/30/0/0]}");
    }

    // ------------------------------------------------------------------ shared holds (PROTOCOL.md 13)

    private static final byte[] K = "k".getBytes(UTF_8);

    @Test
    void sharedGrantsFillTheLimitAndTheirReleaseExtendAndCheckAreEachPerToken() {
        ReplicatedTable t = new ReplicatedTable();
        assertThat(t.apply(new Grant(K, 5, 10, HoldMode.ofLimit(2)))).isEqualTo(Outcome.GRANTED);
        assertThat(t.apply(new Grant(K, 6, 20, HoldMode.ofLimit(2)))).isEqualTo(Outcome.GRANTED);
        assertThat(t.apply(new Grant(K, 7, 20, HoldMode.ofLimit(2)))).as("past the limit").isEqualTo(Outcome.REJECTED);
        assertThat(t.counter()).as("a rejected grant still moves the counter: it may have been answered").isEqualTo(7);
        assertThat(canonical(t)).isEqualTo("counter=7 rejected=1 {k=permits(2) [5/10/0/0, 6/20/0/0]}");
        assertThat(t.apply(new Extend(K, 5, 60))).isEqualTo(Outcome.EXTENDED);
        assertThat(t.apply(new Extend(K, 5, 30))).isEqualTo(Outcome.EXTENDED);
        assertThat(t.apply(new Command.Check(K, 6))).isEqualTo(Outcome.CHECKED);
        assertThat(t.apply(new Release(K, 6))).isEqualTo(Outcome.RELEASED);
        assertThat(t.apply(new Release(K, 6))).as("a released shared token").isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Extend(K, 6, 60))).isEqualTo(Outcome.NOT_HELD);
        assertThat(canonical(t)).as("the other slot untouched, its longest lease kept")
                .isEqualTo("counter=7 rejected=1 {k=permits(2) [5/60/0/0]}");
        assertThat(t.apply(new Grant(K, 8, 10, HoldMode.ofLimit(2)))).as("a freed slot is granted again").isEqualTo(Outcome.GRANTED);
        assertThat(t.sharedSlots()).isEqualTo(2);
        assertThat(t.apply(new Expire(K, 8))).isEqualTo(Outcome.EXPIRED);
        assertThat(t.apply(new Release(K, 5))).isEqualTo(Outcome.RELEASED);
        assertThat(t.size()).as("the last slot gone: the key and its limit are forgotten").isZero();
        assertThat(t.apply(new Grant(K, 9, 10, HoldMode.ofLimit(3)))).as("a new limit once the key is free").isEqualTo(Outcome.GRANTED);
        assertThat(t.held()).singleElement().satisfies(h -> assertThat(h.mode().limit()).isEqualTo(3));
    }

    @Test
    void sharedAndExclusiveNeverMeetOnAKeyAndATokenOrLimitMismatchIsRejected() {
        ReplicatedTable t = new ReplicatedTable();
        t.apply(new Grant(K, 5, 10));
        assertThat(t.apply(new Grant(K, 6, 10, HoldMode.ofLimit(0)))).as("held exclusive").isEqualTo(Outcome.REJECTED);
        t.apply(new Release(K, 5));
        assertThat(t.apply(new Grant(K, 7, 10, HoldMode.ofLimit(0)))).isEqualTo(Outcome.GRANTED);
        assertThat(t.apply(new Grant(K, 8, 10))).as("held shared").isEqualTo(Outcome.REJECTED);
        assertThat(t.apply(new Grant(K, 9, 10, HoldMode.ofLimit(4)))).as("another limit").isEqualTo(Outcome.REJECTED);
        assertThat(t.apply(new Grant(K, 7, 10, HoldMode.ofLimit(0)))).as("a token the key uses").isEqualTo(Outcome.REJECTED);
        assertThat(t.apply(new Grant(K, 0, 10, HoldMode.ofLimit(0)))).as("no token").isEqualTo(Outcome.REJECTED);
        assertThat(t.apply(new Grant("j".getBytes(UTF_8), -3, 10, HoldMode.ofLimit(0)))).isEqualTo(Outcome.REJECTED);
        for (long tok = 10; tok < 110; tok++) {
            assertThat(t.apply(new Grant(K, tok, 10, HoldMode.ofLimit(0)))).as("a read lock: the leader bounds it").isEqualTo(Outcome.GRANTED);
        }
        assertThat(t.rejected()).isEqualTo(6);
        assertThat(t.sharedSlots()).isEqualTo(101);
        assertThat(t.counter()).isEqualTo(109);
    }

    /** 13.5: an expired shared grant keeps its slot (no token) until its delay ends; the other slots are free to use. */
    @Test
    void aSharedExpiryWithLockDelayKeepsItsSlotUntilTheDelayEnds() throws IOException {
        ReplicatedTable t = new ReplicatedTable();
        t.apply(new Grant(K, 5, 10, HoldMode.ofLimit(2)));
        t.apply(new Grant(K, 6, 10, HoldMode.ofLimit(2)));
        assertThat(t.apply(new Expire(K, 5, 15))).isEqualTo(Outcome.EXPIRED);
        assertThat(canonical(t)).isEqualTo("counter=6 rejected=0 {k=permits(2) [0/0/5/15, 6/10/0/0]}");
        assertThat(t.apply(new Grant(K, 7, 10, HoldMode.ofLimit(2)))).as("the delayed slot counts to the limit").isEqualTo(Outcome.REJECTED);
        assertThat(t.apply(new Release(K, 5))).as("a delayed token is not held").isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Extend(K, 5, 10))).isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Release(K, 6))).isEqualTo(Outcome.RELEASED);
        assertThat(t.held()).as("the delayed slot keeps the key and its limit").singleElement().satisfies(h -> {
            assertThat(h.mode().limit()).isEqualTo(2);
            assertThat(h.slots()).containsExactly(HeldGrant.Slot.delayed(5, 15));
        });
        assertThat(t.apply(new Grant(K, 8, 10))).as("no exclusive grant during a shared delay").isEqualTo(Outcome.REJECTED);
        ReplicatedTable copy = roundTrip(t);
        assertThat(canonical(copy)).as("snapshot format 3 keeps the delayed slot").isEqualTo(canonical(t));
        assertThat(t.apply(new Expire(K, 5, 3))).as("only a 0-delay Expire ends a delay").isEqualTo(Outcome.NOT_HELD);
        assertThat(t.apply(new Expire(K, 5, 0))).isEqualTo(Outcome.DELAY_ENDED);
        assertThat(t.size()).isZero();
        assertThat(copy.apply(new Expire(K, 5, 0))).isEqualTo(Outcome.DELAY_ENDED);
        assertThat(copy.apply(new Grant(K, 9, 10))).isEqualTo(Outcome.GRANTED);
    }

    @Test
    void aSharedExpiryWithoutDelayFreesItsSlotAtOnce() {
        ReplicatedTable t = new ReplicatedTable();
        t.apply(new Grant(K, 5, 10, HoldMode.ofLimit(1)));
        assertThat(t.apply(new Expire(K, 5, 0))).isEqualTo(Outcome.EXPIRED);
        assertThat(t.size()).isZero();
        assertThat(t.apply(new Expire(K, 5, 0))).isEqualTo(Outcome.NOT_HELD);
    }

    @Test
    void aSnapshotRoundTripsExclusiveSharedAndDelayedRowsInFormatFive() throws IOException {
        ReplicatedTable t = new ReplicatedTable();
        t.apply(new Grant("x".getBytes(UTF_8), 3, 30));
        t.apply(new Grant("d".getBytes(UTF_8), 4, 30));
        t.apply(new Expire("d".getBytes(UTF_8), 4, 5));
        t.apply(new Grant("r".getBytes(UTF_8), 10, 20, HoldMode.ofLimit(0)));
        t.apply(new Grant("r".getBytes(UTF_8), 11, 40, HoldMode.ofLimit(0)));
        t.apply(new Grant("s".getBytes(UTF_8), 12, 7, HoldMode.ofLimit(4)));
        t.apply(new Expire("s".getBytes(UTF_8), 12, 9));
        t.apply(new Grant("s".getBytes(UTF_8), 13, 8, HoldMode.ofLimit(4)));
        ReplicatedTable copy = roundTrip(t);
        assertThat(canonical(copy)).isEqualTo(canonical(t)).isEqualTo(MIXED);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            t.writeTo(out);
        }
        assertThat(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())).readInt()).isEqualTo(5);
        assertThat(copy.apply(new Grant("r".getBytes(UTF_8), 14, 5, HoldMode.ofLimit(0)))).isEqualTo(Outcome.GRANTED);
        assertThat(copy.apply(new Grant("s".getBytes(UTF_8), 15, 5, HoldMode.ofLimit(4)))).isEqualTo(Outcome.GRANTED);
    }

    /** An exclusive key, an exclusive key in lock-delay, a read lock, and a semaphore with a delayed slot. */
    private static final String MIXED = "counter=13 rejected=0 {d=exclusive [0/0/4/5], r=read [10/20/0/0, 11/40/0/0], "
            + "s=permits(4) [0/0/12/9, 13/8/0/0], x=exclusive [3/30/0/0]}";

    /**
     * Snapshots of the builds before one hold model (format 3: an exclusive part and a shared part
     * in every row) are still read, into the same table as {@link #MIXED}: the bytes such a build
     * wrote, by hand.
     */
    @Test
    void aFormatThreeSnapshotIsStillRead() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(3);
            out.writeLong(13); // counter
            out.writeLong(0); // rejected
            out.writeInt(4);
            formatThreeRow(out, "x", 3, 30, 0, 0, -1);
            formatThreeRow(out, "d", 0, 0, 4, 5, -1);
            formatThreeRow(out, "r", 0, 0, 0, 0, 0, new long[] {10, 20, 0, 0}, new long[] {11, 40, 0, 0});
            formatThreeRow(out, "s", 0, 0, 0, 0, 4, new long[] {0, 0, 12, 9}, new long[] {13, 8, 0, 0});
        }
        ReplicatedTable t = ReplicatedTable.readFrom(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(canonical(t)).isEqualTo(MIXED);
        assertThat(t.apply(new Grant("s".getBytes(UTF_8), 14, 5, HoldMode.permits(4)))).as("the limit came across")
                .isEqualTo(Outcome.GRANTED);
        assertThat(t.apply(new Grant("r".getBytes(UTF_8), 15, 5, HoldMode.permits(4)))).isEqualTo(Outcome.REJECTED);
        assertThat(canonical(roundTrip(t))).isEqualTo(canonical(t));
    }

    /** One row as format 3 wrote it: the exclusive part, the shared limit (-1: none) and the slots. */
    private static void formatThreeRow(DataOutputStream out, String key, long token, int maxLease, long delayed,
            int delaySeconds, int limit, long[]... slots) throws IOException {
        byte[] k = key.getBytes(UTF_8);
        out.writeInt(k.length);
        out.write(k);
        out.writeLong(token);
        out.writeShort(maxLease);
        out.writeLong(delayed);
        out.writeByte(delaySeconds);
        out.writeInt(limit);
        out.writeInt(slots.length);
        for (long[] slot : slots) {
            out.writeLong(slot[0]);
            out.writeShort((int) slot[1]);
            out.writeLong(slot[2]);
            out.writeByte((int) slot[3]);
        }
    }

    /** Snapshots written before shared holds (format 2: lock-delay, no shared part) are still read. */
    @Test
    void aFormatTwoSnapshotIsStillRead() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(2);
            out.writeLong(50); // counter
            out.writeLong(1); // rejected
            out.writeInt(2);
            byte[] k = "orders/42".getBytes(UTF_8);
            out.writeInt(k.length);
            out.write(k);
            out.writeLong(41);
            out.writeShort(30);
            out.writeLong(0);
            out.writeByte(0);
            byte[] d = "orders/43".getBytes(UTF_8);
            out.writeInt(d.length);
            out.write(d);
            out.writeLong(0);
            out.writeShort(0);
            out.writeLong(50);
            out.writeByte(12);
        }
        ReplicatedTable t = ReplicatedTable.readFrom(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(canonical(t)).isEqualTo("counter=50 rejected=1 {orders/42=exclusive [41/30/0/0], orders/43=exclusive [0/0/50/12]}");
        assertThat(t.apply(new Grant("orders/44".getBytes(UTF_8), 51, 5, HoldMode.ofLimit(0)))).isEqualTo(Outcome.GRANTED);
        assertThat(canonical(roundTrip(t))).isEqualTo(canonical(t));
    }

    /**
     * A leader's log: grants on free keys with increasing tokens, releases, extends and expiries
     * of held tokens, plus stale or wrong ones (a Release of an old token, a Grant on a held key).
     */
    static List<Command> randomLog(Random random, int n) {
        Map<String, Long> held = new HashMap<>();
        long token = random.nextInt(100);
        List<Command> log = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String key = "key-" + random.nextInt(40);
            byte[] k = key.getBytes(UTF_8);
            Long t = held.get(key);
            int lease = 1 + random.nextInt(255);
            switch (random.nextInt(12)) {
                case 0, 1, 2 -> {
                    token += 1 + random.nextInt(3);
                    log.add(new Grant(k, token, lease));
                    held.putIfAbsent(key, token);
                }
                case 10, 11 -> {
                    // shared: a key's limit is its number mod 4 (0 = read lock), now and then a wrong one
                    token += 1 + random.nextInt(3);
                    int limit = random.nextInt(8) == 0 ? 5 : Integer.parseInt(key.substring(4)) % 4;
                    log.add(new Grant(k, token, lease, HoldMode.ofLimit(limit)));
                    held.putIfAbsent(key, token);
                }
                case 3, 4 -> {
                    log.add(new Release(k, t != null ? t : 1 + random.nextInt((int) token + 1)));
                    held.remove(key);
                }
                case 5, 6 -> log.add(new Extend(k, t != null && random.nextInt(5) > 0 ? t : token + 7, lease));
                case 7 -> {
                    long expired = t != null ? t : token;
                    int delay = random.nextInt(3) == 0 ? 1 + random.nextInt(60) : 0;
                    log.add(new Expire(k, expired, delay));
                    held.remove(key);
                    if (delay > 0 && random.nextBoolean()) {
                        log.add(new Expire(k, expired, 0)); // the delay's end
                    }
                }
                default -> log.add(new Release(k, t != null ? t - 1 : 0)); // a stale token
            }
        }
        return log;
    }

    /** The table's content in a fixed order (copies may iterate their hash tables differently). */
    static String canonical(ReplicatedTable t) {
        TreeMap<String, String> sorted = new TreeMap<>();
        for (HeldGrant h : t.held()) {
            sorted.put(new String(h.key(), UTF_8), h.mode() + " " + h.slots().stream().map(s -> s.token() + "/"
                    + s.maxLeaseSeconds() + "/" + s.delayedToken() + "/" + s.delaySeconds()).sorted().toList());
        }
        return "counter=" + t.counter() + " rejected=" + t.rejected() + " " + sorted;
    }

    static ReplicatedTable roundTrip(ReplicatedTable t) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            t.writeTo(out);
        }
        return ReplicatedTable.readFrom(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
    }
}
