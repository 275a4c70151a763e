package dev.leasehold.bench;

import java.io.Closeable;
import java.io.IOException;

/**
 * One session (TCP connection) to a lock server, used by exactly one load thread. Every call is
 * blocking. Tokens: a positive value is a grant; {@link #TIMED_OUT} and {@link #BUSY} are not.
 */
interface LockConn extends Closeable {

    long TIMED_OUT = 0;
    long BUSY = -1;

    /** One acquire; for {@code waitSeconds > 0} it may wait (server queue, or client polling for Redis). */
    long acquire(byte[] key, int waitSeconds, int leaseSeconds) throws IOException;

    /** True if the grant was still active and is now released. */
    boolean release(byte[] key, long token) throws IOException;

    /** Pipelined: sends {@code n} wait-0 acquires in one write, then reads their {@code n} answers. */
    void acquireBatch(byte[][] keys, int from, int n, int leaseSeconds, long[] tokensOut) throws IOException;

    /** Pipelined: sends {@code n} releases in one write, then reads their answers; returns how many released. */
    int releaseBatch(byte[][] keys, int from, int n, long[] tokens) throws IOException;

    void ping() throws IOException;
}
