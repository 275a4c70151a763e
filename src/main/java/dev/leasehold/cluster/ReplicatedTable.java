package dev.leasehold.cluster;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.leasehold.cluster.Command.Expire;
import dev.leasehold.cluster.Command.Extend;
import dev.leasehold.cluster.Command.Grant;
import dev.leasehold.cluster.Command.SharedGrant;
import dev.leasehold.registry.HeldGrant;

/**
 * The replicated part of the lock state in cluster mode (PROTOCOL.md section 10): which key is
 * held by which token (exclusive), or by which shared slots under which limit (section 13), the
 * longest lease requested for each grant, the keys and shared slots in lock-delay, and the token
 * counter. Every node applies the committed {@link Command}s in log order, so every copy is
 * identical; no clock is read (the leader times leases, entries carry durations only).
 *
 * <p>Queues, waiters and lease ends are not here: they belong to the leader's registry, which a
 * new leader rebuilds from {@link #held()} ({@code LockRegistry.promote}).
 *
 * <p>Not thread-safe: the Raft apply thread owns it (snapshots are taken between applies).
 */
public final class ReplicatedTable {

    /** What applying a command did. */
    public enum Outcome {
        GRANTED,
        RELEASED,
        EXTENDED,
        EXPIRED,
        /** A Check: never a change. */
        CHECKED,
        /** The lock-delay after an expiry ended: the key (or that shared slot) is free. */
        DELAY_ENDED,
        /** Release/Extend/Expire of a token that is not an active grant of the key: no change. */
        NOT_HELD,
        /**
         * A grant the table cannot take: an exclusive grant on a key that is still held (exclusive
         * or shared), a shared grant on a key held exclusive, with another limit than the key's
         * shared slots, past the limit, or of a token the key already uses; or a token that is not
         * positive. The leader's view was wrong (a bug, or a deposed leader's entry). No change.
         */
        REJECTED
    }

    /**
     * One shared slot: active grant {@code token} (its longest lease {@code maxLeaseSeconds}), or,
     * with {@code token} 0, in lock-delay after {@code delayedToken} for {@code delaySeconds}.
     */
    private static final class Slot {
        long token;
        int maxLeaseSeconds;
        long delayedToken;
        int delaySeconds;

        HeldGrant.Slot view() {
            return new HeldGrant.Slot(token, maxLeaseSeconds, delayedToken, delaySeconds);
        }
    }

    /**
     * One key's replicated state. Exclusive: held by {@code token} (its longest lease
     * {@code maxLeaseSeconds}), or, with {@code token} 0, in lock-delay after the expiry of
     * {@code delayedToken} for {@code delaySeconds}. Shared: no token and no delay, the key's
     * {@code sharedLimit} and one or more {@code slots}. A key with none of these is not in the table.
     */
    private static final class Row {
        final byte[] key;
        long token;
        int maxLeaseSeconds;
        long delayedToken;
        int delaySeconds;
        int sharedLimit = HeldGrant.NO_LIMIT;
        final List<Slot> slots = new ArrayList<>(1);

        Row(byte[] key) {
            this.key = key;
        }

        boolean holds(long t) {
            return t != 0 && token == t;
        }

        boolean isEmpty() {
            return token == 0 && delayedToken == 0 && slots.isEmpty();
        }

        /** The active shared slot of {@code t}, or null. */
        Slot active(long t) {
            for (Slot s : slots) {
                if (t != 0 && s.token == t) {
                    return s;
                }
            }
            return null;
        }

        /** The shared slot in lock-delay after {@code t}, or null. */
        Slot delayed(long t) {
            for (Slot s : slots) {
                if (t != 0 && s.delayedToken == t) {
                    return s;
                }
            }
            return null;
        }

        void remove(Slot s) {
            slots.remove(s);
            if (slots.isEmpty()) {
                sharedLimit = HeldGrant.NO_LIMIT; // one limit per key only while a slot uses it (13.2)
            }
        }

        HeldGrant view() {
            if (!slots.isEmpty()) {
                return HeldGrant.shared(key, sharedLimit, slots.stream().map(Slot::view).toList());
            }
            return new HeldGrant(key, token, maxLeaseSeconds, delayedToken, delaySeconds);
        }
    }

    /** A key as a map key: the exact bytes, compared by content. */
    private record Key(byte[] bytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Arrays.equals(k.bytes, bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }
    }

    private final Map<Key, Row> rows = new HashMap<>();
    private long counter;
    private long rejected;

    /** Applies one committed command. Deterministic: same commands in the same order, same state. */
    public Outcome apply(Command command) {
        Key key = new Key(command.key());
        Row row = rows.get(key);
        return switch (command.kind()) {
            case GRANT -> grant(key, row, (Grant) command);
            case SHARED_GRANT -> sharedGrant(key, row, (SharedGrant) command);
            case RELEASE -> release(key, row, command.token());
            case EXTEND -> extend(row, (Extend) command);
            case EXPIRE -> expire(key, row, (Expire) command);
            case CHECK -> Outcome.CHECKED;
        };
    }

    private Outcome grant(Key key, Row row, Grant g) {
        // Tokens are issued by the leader from counter() upwards on several lanes at once, so
        // grants on different keys may reach the log slightly out of token order; the leader
        // never issues a token twice, and a new leader starts above counter().
        if ((row != null && (row.token != 0 || !row.slots.isEmpty())) || g.token() <= 0) {
            return reject(g.token());
        }
        Row r = row != null ? row : new Row(g.key());
        r.delayedToken = 0; // the leader logs the delay's end first; a Grant ends it anyway
        r.delaySeconds = 0;
        r.token = g.token();
        r.maxLeaseSeconds = g.leaseSeconds();
        rows.putIfAbsent(key, r);
        counter = Math.max(counter, g.token());
        return Outcome.GRANTED;
    }

    /**
     * A grant the table refuses still moves the counter past its token: it committed, so the
     * leader that logged it may have answered it (answers wait for the commit, not for this
     * outcome), and a later leader must never issue that token again.
     */
    private Outcome reject(long token) {
        rejected++;
        counter = Math.max(counter, token);
        return Outcome.REJECTED;
    }

    private Outcome sharedGrant(Key key, Row row, SharedGrant g) {
        if (g.token() <= 0 || g.limit() < 0 || (row != null && !admitsShared(row, g))) {
            return reject(g.token());
        }
        Row r = row != null ? row : new Row(g.key());
        r.delayedToken = 0; // as for a Grant: the leader logs an exclusive delay's end first
        r.delaySeconds = 0;
        r.sharedLimit = g.limit();
        Slot s = new Slot();
        s.token = g.token();
        s.maxLeaseSeconds = g.leaseSeconds();
        r.slots.add(s);
        rows.putIfAbsent(key, r);
        counter = Math.max(counter, g.token());
        return Outcome.GRANTED;
    }

    /**
     * Whether {@code row} can take the shared grant {@code g}: not held exclusive, the same limit
     * as its slots, a free slot (limit 0, a read lock, is bounded by the leader's
     * {@code max-shared-holders-per-key}, which the table does not know), a token it does not use.
     */
    private static boolean admitsShared(Row row, SharedGrant g) {
        if (row.token != 0) {
            return false;
        }
        if (row.slots.isEmpty()) {
            return true;
        }
        return row.sharedLimit == g.limit() && (g.limit() == 0 || row.slots.size() < g.limit())
                && row.active(g.token()) == null && row.delayed(g.token()) == null;
    }

    private static Outcome extend(Row row, Extend e) {
        if (row == null) {
            return Outcome.NOT_HELD;
        }
        if (row.holds(e.token())) {
            row.maxLeaseSeconds = Math.max(row.maxLeaseSeconds, e.leaseSeconds());
            return Outcome.EXTENDED;
        }
        Slot s = row.active(e.token());
        if (s == null) {
            return Outcome.NOT_HELD;
        }
        s.maxLeaseSeconds = Math.max(s.maxLeaseSeconds, e.leaseSeconds());
        return Outcome.EXTENDED;
    }

    private Outcome release(Key key, Row row, long token) {
        if (row == null) {
            return Outcome.NOT_HELD;
        }
        if (row.holds(token)) {
            rows.remove(key);
            return Outcome.RELEASED;
        }
        Slot s = row.active(token);
        if (s == null) {
            return Outcome.NOT_HELD;
        }
        row.remove(s);
        removeIfEmpty(key, row);
        return Outcome.RELEASED;
    }

    private Outcome expire(Key key, Row row, Expire x) {
        long token = x.token();
        if (row == null || token == 0) {
            return Outcome.NOT_HELD;
        }
        if (row.holds(token)) {
            if (x.delaySeconds() > 0) {
                // A duration only: the leader times it.
                row.token = 0;
                row.maxLeaseSeconds = 0; // no grant: nothing for a new leader to run again
                row.delayedToken = token;
                row.delaySeconds = x.delaySeconds();
            } else {
                rows.remove(key);
            }
            return Outcome.EXPIRED;
        }
        if (row.delayedToken == token && x.delaySeconds() == 0) {
            rows.remove(key);
            return Outcome.DELAY_ENDED;
        }
        Slot active = row.active(token);
        if (active != null) {
            if (x.delaySeconds() > 0) {
                active.token = 0; // the slot stays taken for the delay (13.5)
                active.maxLeaseSeconds = 0;
                active.delayedToken = token;
                active.delaySeconds = x.delaySeconds();
            } else {
                row.remove(active);
                removeIfEmpty(key, row);
            }
            return Outcome.EXPIRED;
        }
        Slot delayed = row.delayed(token);
        if (delayed != null && x.delaySeconds() == 0) {
            row.remove(delayed);
            removeIfEmpty(key, row);
            return Outcome.DELAY_ENDED;
        }
        return Outcome.NOT_HELD;
    }

    private void removeIfEmpty(Key key, Row row) {
        if (row.isEmpty()) {
            rows.remove(key);
        }
    }

    /** The highest token granted so far: a new leader issues tokens above it. */
    public long counter() {
        return counter;
    }

    /** Grants refused at apply (should stay 0; see {@link Outcome#REJECTED}). */
    public long rejected() {
        return rejected;
    }

    /** Held keys (exclusive or shared) and keys in lock-delay. */
    public int size() {
        return rows.size();
    }

    /** Shared slots over all keys, delayed ones included. */
    public int sharedSlots() {
        int n = 0;
        for (Row r : rows.values()) {
            n += r.slots.size();
        }
        return n;
    }

    /** Every held key and every key in lock-delay, for promotion on a new leader. */
    public List<HeldGrant> held() {
        List<HeldGrant> out = new ArrayList<>(rows.size());
        for (Row r : rows.values()) {
            out.add(r.view());
        }
        return out;
    }

    /** The snapshot format {@link #writeTo} writes: 2 added lock-delay to each row, 3 shared slots. */
    static final int SNAPSHOT_FORMAT = 3;

    /**
     * Writes the whole table (a snapshot): format, counter, rejected, then every key. Format 3: each
     * row is key, token (0 while in lock-delay or shared), longest lease, delayed token, delay
     * seconds, the shared limit (-1 when none), the slot count, and per slot its token (0 while in
     * lock-delay), longest lease, delayed token and delay seconds. {@link #readFrom} still reads
     * format 2 (no shared part) and 1 (rows of key, token and longest lease only).
     */
    public void writeTo(DataOutput out) throws IOException {
        out.writeInt(SNAPSHOT_FORMAT);
        out.writeLong(counter);
        out.writeLong(rejected);
        out.writeInt(rows.size());
        for (Row r : rows.values()) {
            out.writeInt(r.key.length);
            out.write(r.key);
            out.writeLong(r.token);
            out.writeShort(r.maxLeaseSeconds);
            out.writeLong(r.delayedToken);
            out.writeByte(r.delaySeconds);
            out.writeInt(r.sharedLimit);
            out.writeInt(r.slots.size());
            for (Slot s : r.slots) {
                out.writeLong(s.token);
                out.writeShort(s.maxLeaseSeconds);
                out.writeLong(s.delayedToken);
                out.writeByte(s.delaySeconds);
            }
        }
    }

    /** Reads a table written by {@link #writeTo}, in format 3, 2 or 1. */
    public static ReplicatedTable readFrom(DataInput in) throws IOException {
        int version = in.readInt();
        if (version < 1 || version > SNAPSHOT_FORMAT) {
            throw new IOException("unknown snapshot format " + version);
        }
        ReplicatedTable t = new ReplicatedTable();
        t.counter = in.readLong();
        t.rejected = in.readLong();
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            byte[] key = new byte[in.readInt()];
            in.readFully(key);
            Row r = new Row(key);
            long token = in.readLong();
            int maxLease = in.readUnsignedShort();
            if (token != 0) {
                r.token = token;
                r.maxLeaseSeconds = maxLease;
            }
            if (version >= 2) {
                long delayed = in.readLong();
                int delaySeconds = in.readUnsignedByte();
                if (delayed != 0) {
                    r.delayedToken = delayed;
                    r.delaySeconds = delaySeconds;
                    r.maxLeaseSeconds = 0;
                }
            }
            if (version >= 3) {
                readShared(in, r);
            }
            if (!r.isEmpty()) {
                t.rows.putIfAbsent(new Key(key), r);
            }
        }
        return t;
    }

    private static void readShared(DataInput in, Row r) throws IOException {
        int limit = in.readInt();
        int slots = in.readInt();
        if (slots < 0 || (slots > 0 && limit < 0)) {
            throw new IOException("bad shared row: limit " + limit + ", " + slots + " slots");
        }
        for (int j = 0; j < slots; j++) {
            Slot s = new Slot();
            s.token = in.readLong();
            s.maxLeaseSeconds = in.readUnsignedShort();
            s.delayedToken = in.readLong();
            s.delaySeconds = in.readUnsignedByte();
            r.slots.add(s);
        }
        r.sharedLimit = slots > 0 ? limit : HeldGrant.NO_LIMIT;
    }
}
