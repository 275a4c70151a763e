package dev.leasehold.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;

/**
 * The official client as an application uses it: every load thread shares ONE
 * {@link LeaseholdClient}; acquire is the blocking {@code acquire(key, wait, lease)} and release
 * is {@link Ticket#release()} of the ticket it returned. Closing a view does not close the shared
 * client (the benchmark closes it after the run).
 */
final class ClientConn implements LockConn {

    private final LeaseholdClient client;
    /** The ticket of the last grant of this thread, released by token. */
    private Ticket held;

    ClientConn(LeaseholdClient client) {
        this.client = client;
    }

    @Override
    public long acquire(byte[] key, int waitSeconds, int leaseSeconds) throws IOException {
        AcquireOutcome o = client.acquire(new String(key, StandardCharsets.UTF_8), waitSeconds, leaseSeconds);
        if (o instanceof AcquireOutcome.Acquired a) {
            held = a.ticket();
            return a.ticket().token();
        }
        if (o instanceof AcquireOutcome.TimedOut) {
            return TIMED_OUT;
        }
        if (o instanceof AcquireOutcome.Busy) {
            return BUSY;
        }
        throw new IOException("official client: " + o);
    }

    @Override
    public boolean release(byte[] key, long token) throws IOException {
        Ticket t = held;
        held = null;
        if (t == null || t.token() != token) {
            throw new IOException("release of a token this thread does not hold: " + token);
        }
        return t.release() == ReleaseOutcome.RELEASED;
    }

    @Override
    public void acquireBatch(byte[][] keys, int from, int n, int leaseSeconds, long[] tokensOut) {
        throw new UnsupportedOperationException("the official client has no pipelined batch");
    }

    @Override
    public int releaseBatch(byte[][] keys, int from, int n, long[] tokens) {
        throw new UnsupportedOperationException("the official client has no pipelined batch");
    }

    @Override
    public void ping() throws IOException {
        client.ping();
    }

    @Override
    public void close() {
        // the shared client outlives its views
    }
}
