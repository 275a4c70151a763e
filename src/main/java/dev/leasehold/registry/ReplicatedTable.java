package dev.leasehold.registry;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The replicated part of the lock state in cluster mode (PROTOCOL.md section 10): which key is
 * held by which token, the longest lease requested for each grant, and the token counter. Every
 * node applies the committed {@link Command}s in log order with the same {@link KeyState}
 * transitions the single-node registry runs, so every copy is identical; no clock is read (the
 * leader times leases, entries carry durations only).
 *
 * <p>Queues and waiters are not here: they belong to sessions, which live on the leader.
 *
 * <p>Not thread-safe: the Raft apply thread owns it (snapshots are taken between applies).
 */
public final class ReplicatedTable {

    /**
     * A decision, as it travels through the Raft log. Every dispatcher switches over its
     * {@link #kind()} with no default, so a new kind does not compile until each one handles it.
     */
    public sealed interface Command {

        Kind kind();

        byte[] key();

        /** The grant the command is about: the one it creates, releases, extends, expires or checks. */
        long token();
    }

    /** The kinds of {@link Command}; each owns its byte in the log format, as {@code RequestType} owns its wire byte. */
    public enum Kind {
        GRANT('G'),
        RELEASE('R'),
        EXTEND('E'),
        EXPIRE('X'),
        CHECK('C');

        private static final Kind[] BY_BYTE = new Kind[256];

        static {
            for (Kind k : values()) {
                BY_BYTE[k.op] = k;
            }
        }

        private final byte op;

        Kind(char op) {
            this.op = (byte) op;
        }

        /** The kind for a log byte, or {@code null} if no command uses it. */
        public static Kind fromByte(int b) {
            return BY_BYTE[b & 0xFF];
        }

        /** The command's byte in a log entry. */
        public byte op() {
            return op;
        }
    }

    /** {@code token} granted on {@code key} for {@code leaseSeconds} (an Acquire or a hand-off). */
    public record Grant(byte[] key, long token, int leaseSeconds) implements Command {
        @Override
        public Kind kind() {
            return Kind.GRANT;
        }
    }

    /** A Release of {@code token}. */
    public record Release(byte[] key, long token) implements Command {
        @Override
        public Kind kind() {
            return Kind.RELEASE;
        }
    }

    /** An Extend of {@code token} by {@code leaseSeconds}. */
    public record Extend(byte[] key, long token, int leaseSeconds) implements Command {
        @Override
        public Kind kind() {
            return Kind.EXTEND;
        }
    }

    /**
     * The lease of {@code token} ran out on the leader, which then keeps the key in lock-delay for
     * {@code delaySeconds} (PROTOCOL.md section 12; 0 = none). With {@code delaySeconds} 0 on a key
     * in lock-delay after {@code token}: that delay has ended.
     */
    public record Expire(byte[] key, long token, int delaySeconds) implements Command {

        /** An expiry without lock-delay. */
        public Expire(byte[] key, long token) {
            this(key, token, 0);
        }

        @Override
        public Kind kind() {
            return Kind.EXPIRE;
        }
    }

    /**
     * A Check of {@code token}: changes nothing. Logged only so that its commit proves the
     * leader still led after the Check arrived (PROTOCOL.md section 11).
     */
    public record Check(byte[] key, long token) implements Command {
        @Override
        public Kind kind() {
            return Kind.CHECK;
        }
    }

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
     * One held key, as promotion on a new leader needs it; or, with {@code token} 0, a key in
     * lock-delay after the expiry of {@code delayedToken}, for {@code delaySeconds}.
     */
    public record Held(byte[] key, long token, int maxLeaseSeconds, long delayedToken, int delaySeconds) {

        /** A held key (no lock-delay). */
        public Held(byte[] key, long token, int maxLeaseSeconds) {
            this(key, token, maxLeaseSeconds, 0, 0);
        }
    }

    private final KeyTable keys = new KeyTable();
    private long counter;
    private long rejected;

    /** Applies one committed command. Deterministic: same commands in the same order, same state. */
    public Outcome apply(Command command) {
        byte[] key = command.key();
        int hash = KeyTable.hash(key);
        KeyState s = keys.get(key, hash);
        return switch (command.kind()) {
            case GRANT -> grant((Grant) command, s, hash);
            case RELEASE -> release(s, command.token());
            case EXTEND -> extend(s, (Extend) command);
            case EXPIRE -> expire(s, (Expire) command);
            case CHECK -> Outcome.CHECKED;
        };
    }

    private Outcome grant(Grant g, KeyState s, int hash) {
        // Tokens are issued by the leader from counter() upwards on several lanes at once, so
        // grants on different keys may reach the log slightly out of token order; the leader
        // never issues a token twice, and a new leader starts above counter().
        if ((s != null && s.isHeld()) || g.token() <= 0) {
            rejected++;
            return Outcome.REJECTED;
        }
        KeyState k = s != null ? s : new KeyState(g.key(), hash);
        k.endDelay(k.delayEndNanos); // the leader logs the delay's end first; a Grant ends it anyway
        k.grant(g.token(), 0, g.leaseSeconds(), 0);
        keys.putIfAbsent(k);
        counter = Math.max(counter, g.token());
        return Outcome.GRANTED;
    }

    private static Outcome extend(KeyState s, Extend e) {
        if (s == null || !s.holds(e.token())) {
            return Outcome.NOT_HELD;
        }
        s.extendTo(s.leaseEndNanos, e.leaseSeconds());
        return Outcome.EXTENDED;
    }

    private Outcome release(KeyState s, long token) {
        if (s == null || !s.release(token)) {
            return Outcome.NOT_HELD;
        }
        keys.remove(s);
        return Outcome.RELEASED;
    }

    private Outcome expire(KeyState s, Expire x) {
        long token = x.token();
        if (s != null && !s.holds(token) && s.delayedToken == token && token != 0 && x.delaySeconds() == 0) {
            s.endDelay(s.delayEndNanos);
            keys.remove(s);
            return Outcome.DELAY_ENDED;
        }
        if (s == null || !s.release(token)) {
            return Outcome.NOT_HELD;
        }
        if (x.delaySeconds() > 0) {
            s.delay(token, 0, 0, x.delaySeconds()); // a duration only: the leader times it
            return Outcome.EXPIRED;
        }
        keys.remove(s);
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
        return keys.size();
    }

    /** Every held key and every key in lock-delay, for promotion on a new leader. */
    public List<Held> held() {
        List<Held> out = new ArrayList<>(keys.size());
        for (KeyState s : keys.snapshot()) {
            out.add(new Held(s.key, s.token, s.maxLeaseSeconds, s.delayedToken, s.delaySeconds));
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
        List<Held> held = held();
        out.writeInt(held.size());
        for (Held h : held) {
            out.writeInt(h.key().length);
            out.write(h.key());
            out.writeLong(h.token());
            out.writeShort(h.maxLeaseSeconds());
            out.writeLong(h.delayedToken());
            out.writeByte(h.delaySeconds());
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
            KeyState s = new KeyState(key, KeyTable.hash(key));
            long token = in.readLong();
            int maxLease = in.readUnsignedShort();
            if (token != 0) {
                s.grant(token, 0, maxLease, 0);
            }
            if (version >= 2) {
                long delayed = in.readLong();
                int delaySeconds = in.readUnsignedByte();
                if (delayed != 0) {
                    s.delay(delayed, 0, 0, delaySeconds);
                }
            }
            t.keys.putIfAbsent(s);
        }
        return t;
    }
}
