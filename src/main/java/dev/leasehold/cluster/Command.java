package dev.leasehold.cluster;

/**
 * A lock decision, as it travels through the Raft log (one entry holds a batch: see
 * {@link CommandCodec}). Every dispatcher switches over its {@link #kind()} with no default, so
 * a new kind does not compile until each one handles it.
 */
public sealed interface Command permits Command.Grant, Command.SharedGrant, Command.Release, Command.Extend, Command.Expire, Command.Check {

    Kind kind();

    byte[] key();

    /** The grant the command is about: the one it creates, releases, extends, expires or checks. */
    long token();

    /** The kinds of command; each owns its byte in the log format, as {@code RequestType} owns its wire byte. */
    enum Kind {
        GRANT('G'),
        /** A shared grant (PROTOCOL.md section 13): its row also carries the key's limit. */
        SHARED_GRANT('S'),
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
    record Grant(byte[] key, long token, int leaseSeconds) implements Command {
        @Override
        public Kind kind() {
            return Kind.GRANT;
        }
    }

    /**
     * Shared {@code token} granted on {@code key} for {@code leaseSeconds} (an {@code S}, or a
     * shared waiter granted from the queue), under the key's {@code limit} (PROTOCOL.md section
     * 13: 0 = a read lock, N = a semaphore of N permits). Release, Extend, Expire and Check of a
     * shared grant are the commands above and below, by its token.
     */
    record SharedGrant(byte[] key, long token, int leaseSeconds, int limit) implements Command {
        @Override
        public Kind kind() {
            return Kind.SHARED_GRANT;
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
