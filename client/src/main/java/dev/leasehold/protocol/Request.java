package dev.leasehold.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A decoded client request. Keys are kept as the exact bytes received: the protocol compares
 * keys byte for byte, with no Unicode normalisation.
 */
public sealed interface Request permits Request.Keyed, Request.Ping {

    RequestType type();

    /**
     * A request that names a key: the lock requests. The server checks its key against the
     * session's ACL (PROTOCOL.md section 4), and in cluster mode only the leader serves it
     * (section 10).
     */
    sealed interface Keyed extends Request permits Acquiring, Release, Extend, Check {

        /** The key, as the exact bytes received. */
        byte[] key();
    }

    /**
     * A request for a grant, in any {@link HoldMode}: the server decides and answers every one
     * the same way (PROTOCOL.md sections 3 and 13), so it serves them through this view and asks
     * only the mode what differs.
     */
    sealed interface Acquiring extends Keyed permits Acquire, SharedAcquire {

        /** Seconds it may wait in the key's queue; 0 never queues. */
        int waitSeconds();

        /** The lease asked for, in seconds. */
        int leaseSeconds();

        /** Correlates the answer; carries no authority. */
        long owner();

        /** How the grant would hold the key. */
        HoldMode mode();
    }

    /**
     * Ask for the lock on {@code key}. {@code waitSeconds} 0 is one immediate attempt that never
     * queues; {@code owner} only correlates the answer and carries no authority.
     */
    record Acquire(int waitSeconds, int leaseSeconds, long owner, byte[] key) implements Acquiring {
        @Override
        public RequestType type() {
            return RequestType.ACQUIRE;
        }

        @Override
        public HoldMode mode() {
            return HoldMode.EXCLUSIVE;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Acquire a && a.waitSeconds == waitSeconds && a.leaseSeconds == leaseSeconds
                    && a.owner == owner && Arrays.equals(a.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(owner) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "Acquire[wait=" + waitSeconds + "s, lease=" + leaseSeconds + "s, owner=" + owner + ", key="
                    + Keys.printable(key) + "]";
        }
    }

    /**
     * Ask for a shared grant on {@code key} (PROTOCOL.md section 13): {@code limit} 0 is a read
     * lock (beside {@link Acquire} as the write lock), N a semaphore of N permits. Answered like
     * an Acquire, or {@code L} when the key's shared holds use another limit.
     */
    record SharedAcquire(int waitSeconds, int leaseSeconds, long owner, int limit, byte[] key) implements Acquiring {
        @Override
        public RequestType type() {
            return RequestType.SHARED_ACQUIRE;
        }

        /** {@link HoldMode#READ} for limit 0, else a semaphore of {@code limit} permits. */
        @Override
        public HoldMode mode() {
            return HoldMode.ofLimit(limit);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SharedAcquire a && a.waitSeconds == waitSeconds && a.leaseSeconds == leaseSeconds
                    && a.owner == owner && a.limit == limit && Arrays.equals(a.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(owner) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "SharedAcquire[wait=" + waitSeconds + "s, lease=" + leaseSeconds + "s, owner=" + owner + ", limit="
                    + limit + ", key=" + Keys.printable(key) + "]";
        }
    }

    /** Release the grant with this exact {@code token}. */
    record Release(long token, byte[] key) implements Keyed {
        @Override
        public RequestType type() {
            return RequestType.RELEASE;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Release r && r.token == token && Arrays.equals(r.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(token) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "Release[token=" + token + ", key=" + Keys.printable(key) + "]";
        }
    }

    /** Extend the grant with this exact {@code token} to at least {@code leaseSeconds} from now. */
    record Extend(int leaseSeconds, long token, byte[] key) implements Keyed {
        @Override
        public RequestType type() {
            return RequestType.EXTEND;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Extend e && e.leaseSeconds == leaseSeconds && e.token == token
                    && Arrays.equals(e.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(token) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "Extend[lease=" + leaseSeconds + "s, token=" + token + ", key=" + Keys.printable(key) + "]";
        }
    }

    /**
     * Ask whether {@code token} is the key's active grant (PROTOCOL.md section 11): answered
     * {@code C token} or {@code N token}; never changes the key's state.
     */
    record Check(long token, byte[] key) implements Keyed {
        @Override
        public RequestType type() {
            return RequestType.CHECK;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Check c && c.token == token && Arrays.equals(c.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(token) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "Check[token=" + token + ", key=" + Keys.printable(key) + "]";
        }
    }

    /** Round-trip probe; the server echoes {@code nonce}. */
    record Ping(long nonce) implements Request {
        @Override
        public RequestType type() {
            return RequestType.PING;
        }
    }

    /** Convenience for tools and tests: a key given as text. */
    static byte[] key(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
