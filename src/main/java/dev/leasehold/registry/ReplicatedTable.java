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

    /** A state-changing decision, as it travels through the Raft log. */
    public sealed interface Command {
        byte[] key();
    }

    /** {@code token} granted on {@code key} for {@code leaseSeconds} (an Acquire or a hand-off). */
    public record Grant(byte[] key, long token, int leaseSeconds) implements Command {
    }

    /** A Release of {@code token}. */
    public record Release(byte[] key, long token) implements Command {
    }

    /** An Extend of {@code token} by {@code leaseSeconds}. */
    public record Extend(byte[] key, long token, int leaseSeconds) implements Command {
    }

    /** The lease of {@code token} ran out on the leader. */
    public record Expire(byte[] key, long token) implements Command {
    }

    /**
     * A Check of {@code token}: changes nothing. Logged only so that its commit proves the
     * leader still led after the Check arrived (PROTOCOL.md section 11).
     */
    public record Check(byte[] key, long token) implements Command {
    }

    /** What applying a command did. */
    public enum Outcome {
        GRANTED,
        RELEASED,
        EXTENDED,
        EXPIRED,
        /** A Check: never a change. */
        CHECKED,
        /** Release/Extend/Expire of a token that is not the key's active grant: no change. */
        NOT_HELD,
        /**
         * A Grant on a key that is still held, or of a token already used: the leader's view
         * was wrong (a bug, or a deposed leader's entry). No change.
         */
        REJECTED
    }

    /** One held key, as promotion on a new leader needs it. */
    public record Held(byte[] key, long token, int maxLeaseSeconds) {
    }

    private final KeyTable keys = new KeyTable();
    private long counter;
    private long rejected;

    /** Applies one committed command. Deterministic: same commands in the same order, same state. */
    public Outcome apply(Command c) {
        byte[] key = c.key();
        int hash = KeyTable.hash(key);
        KeyState s = keys.get(key, hash);
        if (c instanceof Grant g) {
            // Tokens are issued by the leader from counter() upwards on several lanes at once, so
            // grants on different keys may reach the log slightly out of token order; the leader
            // never issues a token twice, and a new leader starts above counter().
            if ((s != null && s.isHeld()) || g.token() <= 0) {
                rejected++;
                return Outcome.REJECTED;
            }
            KeyState k = s != null ? s : new KeyState(key, hash);
            k.grant(g.token(), 0, g.leaseSeconds(), 0);
            keys.putIfAbsent(k);
            counter = Math.max(counter, g.token());
            return Outcome.GRANTED;
        }
        if (c instanceof Check) {
            return Outcome.CHECKED;
        }
        if (c instanceof Extend e) {
            if (s == null || !s.holds(e.token())) {
                return Outcome.NOT_HELD;
            }
            s.extendTo(s.leaseEndNanos, e.leaseSeconds());
            return Outcome.EXTENDED;
        }
        long token = c instanceof Release r ? r.token() : ((Expire) c).token();
        if (s == null || !s.release(token)) {
            return Outcome.NOT_HELD;
        }
        keys.remove(s);
        return c instanceof Release ? Outcome.RELEASED : Outcome.EXPIRED;
    }

    /** The highest token granted so far: a new leader issues tokens above it. */
    public long counter() {
        return counter;
    }

    /** Grants refused at apply (should stay 0; see {@link Outcome#REJECTED}). */
    public long rejected() {
        return rejected;
    }

    /** Held keys. */
    public int size() {
        return keys.size();
    }

    /** Every held key, for promotion on a new leader. */
    public List<Held> held() {
        List<Held> out = new ArrayList<>(keys.size());
        for (KeyState s : keys.snapshot()) {
            out.add(new Held(s.key, s.token, s.maxLeaseSeconds));
        }
        return out;
    }

    /** Writes the whole table (a snapshot): counter, then every held key. */
    public void writeTo(DataOutput out) throws IOException {
        out.writeInt(1); // format version
        out.writeLong(counter);
        out.writeLong(rejected);
        List<Held> held = held();
        out.writeInt(held.size());
        for (Held h : held) {
            out.writeInt(h.key().length);
            out.write(h.key());
            out.writeLong(h.token());
            out.writeShort(h.maxLeaseSeconds());
        }
    }

    /** Reads a table written by {@link #writeTo}. */
    public static ReplicatedTable readFrom(DataInput in) throws IOException {
        int version = in.readInt();
        if (version != 1) {
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
            s.grant(in.readLong(), 0, in.readUnsignedShort(), 0);
            t.keys.putIfAbsent(s);
        }
        return t;
    }
}
