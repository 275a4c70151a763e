package dev.leasehold.cluster;

import dev.leasehold.protocol.HoldMode;

/**
 * A lock decision, as it travels through the Raft log (one entry holds a batch: see
 * {@link CommandCodec}). Every dispatcher switches over its {@link #kind()} with no default, so
 * a new kind does not compile until each one handles it.
 */
public sealed interface Command permits Command.Grant, Command.Release, Command.Extend, Command.Expire, Command.Check,
        Command.Value {

    Kind kind();

    byte[] key();

    /** The grant the command is about: the one it creates, releases, extends, expires, checks or sets the value of. */
    long token();

    /**
     * The kinds of command; each owns its byte in the log format, as {@code RequestType} owns its
     * wire byte. A grant in a shared mode is written with {@link CommandCodec#SHARED_GRANT_OP}
     * instead, and its limit.
     */
    enum Kind {
        GRANT('G'),
        RELEASE('R'),
        EXTEND('E'),
        EXPIRE('X'),
        CHECK('C'),
        VALUE('V');

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

    /**
     * {@code token} granted on {@code key} for {@code leaseSeconds}, holding it in {@code mode}
     * (an acquire, or a waiter granted from the queue; PROTOCOL.md sections 3 and 13), with its
     * {@code M}'s value (section 17; exclusive only, null for none). Release, Extend, Expire, Check
     * and Value of any grant are the commands below, by its token.
     */
    record Grant(byte[] key, long token, int leaseSeconds, HoldMode mode, byte[] value) implements Command {

        /** A grant without a value. */
        public Grant(byte[] key, long token, int leaseSeconds, HoldMode mode) {
            this(key, token, leaseSeconds, mode, null);
        }

        /** An exclusive grant. */
        public Grant(byte[] key, long token, int leaseSeconds) {
            this(key, token, leaseSeconds, HoldMode.EXCLUSIVE);
        }

        @Override
        public Kind kind() {
            return Kind.GRANT;
        }
    }

    /** A Release of {@code token}. */
    record Release(byte[] key, long token) implements Command {
        @Override
        public Kind kind() {
            return Kind.RELEASE;
        }
    }

    /** An Extend of {@code token} by {@code leaseSeconds}. */
    record Extend(byte[] key, long token, int leaseSeconds) implements Command {
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
    record Expire(byte[] key, long token, int delaySeconds) implements Command {

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
     * A set value ({@code V}) of {@code token} (PROTOCOL.md 17.6): the key's active exclusive grant
     * {@code token}, if it is one when applied, now has {@code value} (empty: none); else no change.
     */
    record Value(byte[] key, long token, byte[] value) implements Command {
        @Override
        public Kind kind() {
            return Kind.VALUE;
        }
    }

    /**
     * A Check of {@code token}: changes nothing. Logged only so that its commit proves the
     * leader still led after the Check arrived (PROTOCOL.md section 11).
     */
    record Check(byte[] key, long token) implements Command {
        @Override
        public Kind kind() {
            return Kind.CHECK;
        }
    }
}
