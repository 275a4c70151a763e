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
import dev.leasehold.cluster.Command.Value;
import dev.leasehold.protocol.HoldMode;
import dev.leasehold.registry.HeldGrant;

/**
 * The replicated part of the lock state in cluster mode (PROTOCOL.md section 10): which key is
 * held by which token (exclusive) with which value (section 17), or by which shared slots under
 * which limit (section 13), the longest lease requested for each grant, the keys and shared slots
 * in lock-delay, and the token counter. Every node applies the committed {@link Command}s in log order, so every copy is
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
        /** A set value of the key's active exclusive grant (the value may be the one it had). */
        VALUE_SET,
        /** The lock-delay after an expiry ended: the key (or that shared slot) is free. */
        DELAY_ENDED,
        /**
         * Release/Extend/Expire/Value of a token that is not an active grant of the key (for Value:
         * not its active exclusive grant): no change.
         */
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
     * One hold: the active grant {@code token} (its longest lease {@code maxLeaseSeconds}), or,
     * with {@code token} 0, a place kept by the lock-delay after {@code delayedToken}'s lease ran
     * out, for {@code delaySeconds} (a duration only: the leader times it). An active exclusive grant
     * may have a {@code value} (PROTOCOL.md section 17), null for none.
     */
    private static final class Slot {
        long token;
        int maxLeaseSeconds;
        long delayedToken;
        int delaySeconds;
        byte[] value;

        static Slot active(long token, int maxLeaseSeconds) {
            Slot s = new Slot();
            s.token = token;
            s.maxLeaseSeconds = maxLeaseSeconds;
            return s;
        }

        static Slot delayed(long delayedToken, int delaySeconds) {
            Slot s = new Slot();
            s.delayedToken = delayedToken;
            s.delaySeconds = delaySeconds;
            return s;
        }

        HeldGrant.Slot view() {
            return new HeldGrant.Slot(token, maxLeaseSeconds, delayedToken, delaySeconds, value);
        }
    }

    /**
     * One key's replicated state: the {@link HoldMode} of its holds and the holds, one for an
     * exclusive key, one or more for a shared one (all of a key's holds share one mode, 13.2).
     * A key with no hold is not in the table.
     */
    private static final class Row {
        final byte[] key;
        HoldMode mode;
        final List<Slot> slots = new ArrayList<>(1);

        Row(byte[] key, HoldMode mode) {
            this.key = key;
            this.mode = mode;
        }

        /** The active hold of {@code t}, or null. */
        Slot active(long t) {
            for (Slot s : slots) {
                if (t != 0 && s.token == t) {
                    return s;
                }
            }
            return null;
        }

        /** The hold in lock-delay after {@code t}, or null. */
        Slot delayed(long t) {
            for (Slot s : slots) {
                if (t != 0 && s.delayedToken == t) {
                    return s;
                }
            }
            return null;
        }

        /** True if no hold is an active grant: only lock-delays are left. */
        boolean onlyDelays() {
            for (Slot s : slots) {
                if (s.token != 0) {
                    return false;
                }
            }
            return true;
        }

        HeldGrant view() {
            return new HeldGrant(key, mode, slots.stream().map(Slot::view).toList());
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
            case RELEASE -> release(key, row, command.token());
            case EXTEND -> extend(row, (Extend) command);
            case EXPIRE -> expire(key, row, (Expire) command);
            case CHECK -> Outcome.CHECKED;
            case VALUE -> value(row, (Value) command);
        };
    }

    private Outcome grant(Key key, Row row, Grant g) {
        // Tokens are issued by the leader from counter() upwards on several lanes at once, so
        // grants on different keys may reach the log slightly out of token order; the leader
        // never issues a token twice, and a new leader starts above counter().
        if (g.token() <= 0 || (row != null && !admits(row, g))) {
            return reject(g.token());
        }
        Row r = row;
        if (r == null || !r.mode.isShared()) {
            // New, or an exclusive key in lock-delay: the leader logs the delay's end first, and
            // a grant ends it anyway.
            r = new Row(g.key(), g.mode());
            rows.put(key, r);
        }
        Slot s = Slot.active(g.token(), g.leaseSeconds());
        if (!g.mode().isShared()) {
            s.value = nonEmpty(g.value()); // grant and value are one entry (PROTOCOL.md 17.6)
        }
        r.slots.add(s);
        counter = Math.max(counter, g.token());
        return Outcome.GRANTED;
    }

    /**
     * Whether {@code row} can take the grant {@code g}: an exclusive key only while it is in
     * lock-delay (then any grant ends the delay); a shared key only a grant of its own mode, while
     * a slot is free (a read lock is bounded by the leader's {@code max-shared-holders-per-key},
     * which the table does not know), with a token it does not use.
     */
    private static boolean admits(Row row, Grant g) {
        if (!row.mode.isShared()) {
            return row.onlyDelays();
        }
        return row.mode.equals(g.mode()) && row.slots.size() < g.mode().slots(Integer.MAX_VALUE)
                && row.active(g.token()) == null && row.delayed(g.token()) == null;
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

    /** A set value: only on the key's active exclusive grant {@code v.token()} (PROTOCOL.md 17.2). */
    private static Outcome value(Row row, Value v) {
        Slot s = row == null || row.mode.isShared() ? null : row.active(v.token());
        if (s == null) {
            return Outcome.NOT_HELD;
        }
        s.value = nonEmpty(v.value());
        return Outcome.VALUE_SET;
    }

    private static byte[] nonEmpty(byte[] value) {
        return value == null || value.length == 0 ? null : value;
    }

    private static Outcome extend(Row row, Extend e) {
        Slot s = row == null ? null : row.active(e.token());
        if (s == null) {
            return Outcome.NOT_HELD;
        }
        s.maxLeaseSeconds = Math.max(s.maxLeaseSeconds, e.leaseSeconds());
        return Outcome.EXTENDED;
    }

    private Outcome release(Key key, Row row, long token) {
        Slot s = row == null ? null : row.active(token);
        if (s == null) {
            return Outcome.NOT_HELD;
        }
        remove(key, row, s);
        return Outcome.RELEASED;
    }

    private Outcome expire(Key key, Row row, Expire x) {
        long token = x.token();
        if (row == null || token == 0) {
            return Outcome.NOT_HELD;
        }
        Slot active = row.active(token);
        if (active != null) {
            if (x.delaySeconds() > 0) {
                // The place stays taken for the delay (sections 12 and 13.5), a duration only.
                active.token = 0;
                active.maxLeaseSeconds = 0; // no grant: nothing for a new leader to run again
                active.value = null; // gone with its grant (PROTOCOL.md 17.2)
                active.delayedToken = token;
                active.delaySeconds = x.delaySeconds();
            } else {
                remove(key, row, active);
            }
            return Outcome.EXPIRED;
        }
        Slot delayed = row.delayed(token);
        if (delayed != null && x.delaySeconds() == 0) {
            remove(key, row, delayed);
            return Outcome.DELAY_ENDED;
        }
        return Outcome.NOT_HELD;
    }

    private void remove(Key key, Row row, Slot s) {
        row.slots.remove(s);
        if (row.slots.isEmpty()) {
            rows.remove(key); // and with it the key's mode: one limit per key only while a hold uses it (13.2)
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
            if (r.mode.isShared()) {
                n += r.slots.size();
            }
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

    /**
     * The snapshot format {@link #writeTo} writes: 2 added lock-delay to each row, 3 shared slots,
     * 4 one shape for every row (a mode and its holds), 5 each exclusive hold's value (PROTOCOL.md 17.6).
     */
    static final int SNAPSHOT_FORMAT = 5;

    /** A row's mode in format 4: its kind's byte, then the permits (u16, 0 unless a semaphore). */
    private static final byte EXCLUSIVE = 'X';
    private static final byte READ = 'R';
    private static final byte PERMITS = 'P';

    /**
     * Writes the whole table (a snapshot): format, counter, rejected, then every key. Format 4: each
     * row is the key, its mode (a byte: {@code X} exclusive, {@code R} read, {@code P} permits; then
     * the permits as u16), the hold count, and per hold its token (0 while in lock-delay), longest
     * lease, delayed token and delay seconds; format 5 adds, to each hold of an exclusive row, its value
     * (u16 length, then the bytes; 0: none). {@link #readFrom} still reads formats 1 to 4.
     */
    public void writeTo(DataOutput out) throws IOException {
        out.writeInt(SNAPSHOT_FORMAT);
        out.writeLong(counter);
        out.writeLong(rejected);
        out.writeInt(rows.size());
        for (Row r : rows.values()) {
            out.writeInt(r.key.length);
            out.write(r.key);
            out.writeByte(switch (r.mode.kind()) {
                case EXCLUSIVE -> EXCLUSIVE;
                case READ -> READ;
                case PERMITS -> PERMITS;
            });
            out.writeShort(r.mode.permits());
            out.writeInt(r.slots.size());
            for (Slot s : r.slots) {
                out.writeLong(s.token);
                out.writeShort(s.maxLeaseSeconds);
                out.writeLong(s.delayedToken);
                out.writeByte(s.delaySeconds);
                if (!r.mode.isShared()) {
                    out.writeShort(s.value == null ? 0 : s.value.length);
                    out.write(s.value == null ? new byte[0] : s.value);
                }
            }
        }
    }

    /** Reads a table written by {@link #writeTo}, in format 5, or by an earlier build in format 4, 3, 2 or 1. */
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
            Row r = version >= 4 ? readRow(in, key, version) : readOldRow(in, key, version);
            if (r != null && !r.slots.isEmpty()) {
                t.rows.putIfAbsent(new Key(key), r);
            }
        }
        return t;
    }

    private static Row readRow(DataInput in, byte[] key, int version) throws IOException {
        int kind = in.readUnsignedByte();
        int permits = in.readUnsignedShort();
        HoldMode mode = switch (kind) {
            case EXCLUSIVE -> HoldMode.EXCLUSIVE;
            case READ -> HoldMode.READ;
            case PERMITS -> HoldMode.permits(permits);
            default -> throw new IOException("bad snapshot row: mode " + kind);
        };
        Row r = new Row(key, mode);
        readSlots(in, r, version >= 5 && !mode.isShared());
        return r;
    }

    /**
     * A row of formats 1 to 3: the exclusive part (token and longest lease; from 2 the delayed
     * token and delay), then from 3 the shared part (the limit, -1 when none, and the slots).
     * At most one of the parts holds anything.
     */
    private static Row readOldRow(DataInput in, byte[] key, int version) throws IOException {
        long token = in.readLong();
        int maxLease = in.readUnsignedShort();
        long delayed = 0;
        int delaySeconds = 0;
        if (version >= 2) {
            delayed = in.readLong();
            delaySeconds = in.readUnsignedByte();
        }
        Row r = new Row(key, HoldMode.EXCLUSIVE);
        if (token != 0) {
            r.slots.add(Slot.active(token, maxLease));
        } else if (delayed != 0) {
            r.slots.add(Slot.delayed(delayed, delaySeconds));
        }
        if (version >= 3) {
            int limit = in.readInt();
            Row shared = new Row(key, limit >= 0 && limit <= HoldMode.MAX_LIMIT ? HoldMode.ofLimit(limit) : HoldMode.READ);
            readSlots(in, shared, false);
            if (!shared.slots.isEmpty()) {
                if (limit < 0 || limit > HoldMode.MAX_LIMIT || !r.slots.isEmpty()) {
                    throw new IOException("bad shared row: limit " + limit + ", " + shared.slots.size() + " slots");
                }
                return shared;
            }
        }
        return r;
    }

    /** @param values each hold is followed by its value (format 5, an exclusive row) */
    private static void readSlots(DataInput in, Row r, boolean values) throws IOException {
        int slots = in.readInt();
        if (slots < 0) {
            throw new IOException("bad snapshot row: " + slots + " holds");
        }
        for (int j = 0; j < slots; j++) {
            Slot s = new Slot();
            s.token = in.readLong();
            s.maxLeaseSeconds = in.readUnsignedShort();
            s.delayedToken = in.readLong();
            s.delaySeconds = in.readUnsignedByte();
            if (values) {
                byte[] v = new byte[in.readUnsignedShort()];
                in.readFully(v);
                s.value = nonEmpty(v);
            }
            r.slots.add(s);
        }
    }
}
