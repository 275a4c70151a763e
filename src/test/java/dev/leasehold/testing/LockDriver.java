package dev.leasehold.testing;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;

/**
 * What {@link LockSemanticsContract} needs of a lock service: sessions that take requests and
 * give answers, a clock, and the count of queued waiters. One implementation drives the registry
 * on a manual clock (time moves when a test waits), one the real server over sockets (time is
 * real, and waiting is awaiting an answer, never a sleep).
 */
public interface LockDriver extends AutoCloseable {

    /** Opens a session (a connection). */
    Conn open() throws Exception;

    /** The lock service's clock, in milliseconds. */
    long nowMillis();

    /**
     * How late a timed event (lease end, wait end) may come and still pass: PROTOCOL.md says it
     * SHOULD come within 100 ms; a real server on two noisy cores gets more room.
     */
    long lateSlackMillis();

    /** Waits until the service has exactly {@code n} queued waiters (bounded). */
    void awaitWaiters(int n) throws Exception;

    /** One session. */
    interface Conn extends AutoCloseable {

        /**
         * Sends {@code r} and returns its immediate answer, or {@code null} when it is an Acquire
         * that entered its key's queue (its answer comes later, see {@link #await}).
         */
        Answer call(Request r) throws Exception;

        /**
         * The next later answer of this session (a queued Acquire's {@code A} or {@code T}),
         * letting at most {@code maxMillis} of the service's time pass; fails if none came.
         */
        Answer await(long maxMillis) throws Exception;

        /** True if this session has no later answer yet. */
        boolean nothingYet() throws Exception;

        /** Closes the session (its queued Acquires are dropped). */
        @Override
        void close() throws Exception;
    }
}
