package dev.leasehold.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A decoded client request. Keys are kept as the exact bytes received: the protocol compares
 * keys byte for byte, with no Unicode normalisation.
 */
public sealed interface Request permits Request.Keyed, Request.Ping, Request.Hello, Request.Unobserve {

    RequestType type();

    /**
     * A request that names a key: the lock requests. The server checks its key against the
     * session's ACL (PROTOCOL.md section 4), and in cluster mode only the leader serves it
     * (section 10).
     */
    sealed interface Keyed extends Request permits Acquiring, Release, Extend, Check, Withdraw, SetValue, Observe {

        /** The key, as the exact bytes received. */
        byte[] key();
    }

    /**
     * A request for a grant, in any {@link HoldMode}: the server decides and answers every one
     * the same way (PROTOCOL.md sections 3, 13 and 14), so it serves them through this view and
     * asks only the mode what differs. The wait is in milliseconds for every one of them: an
     * {@code A} or {@code S} carries whole seconds, an {@code M} milliseconds, and the registry
     * times them all alike.
     */
    sealed interface Acquiring extends Keyed permits Acquire, SharedAcquire, MilliAcquire {

        /** Milliseconds it may wait in the key's queue; 0 never queues. */
        long waitMillis();

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

        /** {@code waitSeconds} in milliseconds. */
        @Override
        public long waitMillis() {
            return waitSeconds * 1000L;
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

        /** {@code waitSeconds} in milliseconds. */
        @Override
        public long waitMillis() {
            return waitSeconds * 1000L;
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

    /**
     * An acquire whose wait is in milliseconds (PROTOCOL.md 14.2): the {@link Acquire} (flags bit 0
     * clear, {@code limit} 0) or the {@link SharedAcquire} (bit 0 set) it stands for, optionally
     * carrying the grant's value (section 17; exclusive only, empty for none).
     *
     * @param flags bit 0: {@link #SHARED}; bits 1 to 7 are reserved and 0
     * @param waitMillis 0 is one immediate attempt that never queues
     * @param value the grant's value, {@code vlen} bytes; empty for none
     */
    record MilliAcquire(int flags, long waitMillis, int leaseSeconds, long owner, int limit, byte[] value,
            byte[] key) implements Acquiring {

        /** Flags bit 0: a shared acquire (an {@code S}); clear, an exclusive one (an {@code A}). */
        public static final int SHARED = 0x01;

        /** An exclusive {@code M} without a value. */
        public static MilliAcquire exclusive(long waitMillis, int leaseSeconds, long owner, byte[] key) {
            return new MilliAcquire(0, waitMillis, leaseSeconds, owner, 0, new byte[0], key);
        }

        /** A shared {@code M}: {@code limit} 0 a read lock, n a semaphore of n permits. */
        public static MilliAcquire shared(long waitMillis, int leaseSeconds, long owner, int limit, byte[] key) {
            return new MilliAcquire(SHARED, waitMillis, leaseSeconds, owner, limit, new byte[0], key);
        }

        @Override
        public RequestType type() {
            return RequestType.MILLI_ACQUIRE;
        }

        /** Exclusive, or the shared mode its {@code limit} names (as an {@code S}'s). */
        @Override
        public HoldMode mode() {
            return (flags & SHARED) != 0 ? HoldMode.ofLimit(limit) : HoldMode.EXCLUSIVE;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof MilliAcquire a && a.flags == flags && a.waitMillis == waitMillis
                    && a.leaseSeconds == leaseSeconds && a.owner == owner && a.limit == limit
                    && Arrays.equals(a.value, value) && Arrays.equals(a.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(owner) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "MilliAcquire[flags=" + flags + ", wait=" + waitMillis + "ms, lease=" + leaseSeconds + "s, owner="
                    + owner + ", limit=" + limit + ", vlen=" + value.length + ", key=" + Keys.printable(key) + "]";
        }
    }

    /**
     * Withdraw this session's acquires of {@code owner} still queued on {@code key} (PROTOCOL.md
     * section 15): each gets its {@code T} at once; one granted first keeps its {@code A}. No
     * answer of its own.
     */
    record Withdraw(long owner, byte[] key) implements Keyed {
        @Override
        public RequestType type() {
            return RequestType.WITHDRAW;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Withdraw w && w.owner == owner && Arrays.equals(w.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(owner) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "Withdraw[owner=" + owner + ", key=" + Keys.printable(key) + "]";
        }
    }

    /**
     * Set the value of the key's active exclusive grant {@code token} (PROTOCOL.md section 17):
     * answered {@code V token} when it is that grant, else {@code N token}. An empty value clears it.
     *
     * @param value any bytes, 0x0A included, at most the server's {@code max-value-bytes}; empty clears
     */
    record SetValue(long token, byte[] value, byte[] key) implements Keyed {
        @Override
        public RequestType type() {
            return RequestType.SET_VALUE;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof SetValue v && v.token == token && Arrays.equals(v.value, value)
                    && Arrays.equals(v.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(token) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "SetValue[token=" + token + ", vlen=" + value.length + ", key=" + Keys.printable(key) + "]";
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

    /**
     * Ask which revision and limits the server speaks (PROTOCOL.md 14.1); answered at once by
     * every node, and changes nothing.
     *
     * @param revision the highest revision the client speaks, e.g. {@link Wire#REVISION_1_4}
     */
    record Hello(int revision) implements Request {
        @Override
        public RequestType type() {
            return RequestType.HELLO;
        }
    }

    /**
     * Observe {@code key} as watch {@code watch} (PROTOCOL.md section 16): answered with the
     * watch's first event (the key's state now, cause 0) or {@code B watch}; its events follow
     * until {@link Unobserve}. {@code watch} is the client's id, unique among its session's open
     * watches.
     */
    record Observe(long watch, byte[] key) implements Keyed {
        @Override
        public RequestType type() {
            return RequestType.OBSERVE;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Observe w && w.watch == watch && Arrays.equals(w.key, key);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(watch) * 31 + Arrays.hashCode(key);
        }

        @Override
        public String toString() {
            return "Observe[watch=" + watch + ", key=" + Keys.printable(key) + "]";
        }
    }

    /**
     * End watch {@code watch} (PROTOCOL.md 16.1): answered {@code U watch} at once, also for an id
     * that is not open; nothing of that watch follows its answer. Every node answers it.
     */
    record Unobserve(long watch) implements Request {
        @Override
        public RequestType type() {
            return RequestType.UNOBSERVE;
        }
    }

    /** Convenience for tools and tests: a key given as text. */
    static byte[] key(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
