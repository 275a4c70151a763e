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
import dev.leasehold.registry.HeldGrant;

/**
 * The replicated part of the lock state in cluster mode (PROTOCOL.md section 10): which key is
 * held by which token, the longest lease requested for each grant, the keys in lock-delay, and
 * the token counter. Every node applies the committed {@link Command}s in log order, so every
 * copy is identical; no clock is read (the leader times leases, entries carry durations only).
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
        /** The lock-delay after an expiry ended: the key is free. */
        DELAY_ENDED,
        /** Release/Extend/Expire of a token that is not the key's active grant: no change. */
        NOT_HELD,
        /**
         * A Grant on a key that is still held, or of a token already used: the leader's view
         * was wrong (a bug, or a deposed leader's entry). No change.
         */
        REJECTED
    }

    /**
     * One key's replicated state: held by {@code token} (its longest lease {@code maxLeaseSeconds}),
     * or, with {@code token} 0, in lock-delay after the expiry of {@code delayedToken} for
     * {@code delaySeconds}. A key with neither is not in the table.
     */
    private static final class Row {
        final byte[] key;
        long token;
        int maxLeaseSeconds;
        long delayedToken;
        int delaySeconds;

        Row(byte[] key) {
            this.key = key;
        }

        boolean holds(long t) {
            return t != 0 && token == t;
        }

        HeldGrant view() {
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
        if ((row != null && row.token != 0) || g.token() <= 0) {
            rejected++;
            return Outcome.REJECTED;
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

    private static Outcome extend(Row row, Extend e) {
        if (row == null || !row.holds(e.token())) {
            return Outcome.NOT_HELD;
        }
        row.maxLeaseSeconds = Math.max(row.maxLeaseSeconds, e.leaseSeconds());
        return Outcome.EXTENDED;
    }

    private Outcome release(Key key, Row row, long token) {
        if (row == null || !row.holds(token)) {
            return Outcome.NOT_HELD;
        }
        rows.remove(key);
        return Outcome.RELEASED;
    }

    private Outcome expire(Key key, Row row, Expire x) {
        long token = x.token();
        if (row != null && !row.holds(token) && row.delayedToken == token && token != 0 && x.delaySeconds() == 0) {
            rows.remove(key);
            return Outcome.DELAY_ENDED;
        }
        if (row == null || !row.holds(token)) {
            return Outcome.NOT_HELD;
        }
        if (x.delaySeconds() > 0) {
            // A duration only: the leader times it.
            row.token = 0;
            row.maxLeaseSeconds = 0; // no grant: nothing for a new leader to run again
            row.delayedToken = token;
            row.delaySeconds = x.delaySeconds();
            return Outcome.EXPIRED;
        }
        rows.remove(key);
        return Outcome.EXPIRED;
    }

    /** The highest token granted so far: a new leader issues tokens above it. */
    public long counter() {
        return counter;
    }

    /** Grants refused at apply (should stay 0; see {@link Outcome#REJECTED}). */
    public long rejected() {
        return rejected;
    }

    /** Held keys and keys in lock-delay. */
    public int size() {
        return rows.size();
    }

    /** Every held key and every key in lock-delay, for promotion on a new leader. */
    public List<HeldGrant> held() {
        List<HeldGrant> out = new ArrayList<>(rows.size());
        for (Row r : rows.values()) {
            out.add(r.view());
        }
        return out;
    }

    /** The snapshot format {@link #writeTo} writes: 2 adds lock-delay to each row. */
    static final int SNAPSHOT_FORMAT = 2;

    /**
     * Writes the whole table (a snapshot): counter, then every key. Format 2 (lock-delay): each
     * row is key, token (0 while in lock-delay), longest lease, delayed token, delay seconds.
     * {@link #readFrom} still reads format 1 (rows without the last two), written before.
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
        }
    }

    /** Reads a table written by {@link #writeTo}. */
    public static ReplicatedTable readFrom(DataInput in) throws IOException {
        int version = in.readInt();
        if (version != 1 && version != 2) {
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
            t.rows.putIfAbsent(new Key(key), r);
        }
        return t;
    }
}
