package dev.leasehold.client.internal;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * A Ping: completes with the round-trip time in nanoseconds, from just before the write to the
 * decoded Pong, or fails with an {@link IOException} when no Pong came by its deadline or its
 * session broke. A Ping that was definitely not sent moves to another session like any request.
 */
public final class PingCall extends Outbound {

    private final long nonce;
    private final long deadline;
    private final CompletableFuture<Long> result = new CompletableFuture<>();

    PingCall(Engine engine, long nonce, long deadline) {
        super(engine);
        this.nonce = nonce;
        this.deadline = deadline;
    }

    void start() {
        armTimer(() -> fail("no Pong before the ping's deadline"), deadline);
    }

    public long nonce() {
        return nonce;
    }

    public long deadline() {
        return deadline;
    }

    /** Round-trip nanoseconds, or an IOException. */
    public CompletableFuture<Long> result() {
        return result;
    }

    @Override
    byte[] beginWrite(Session s, long now) {
        synchronized (this) {
            if (state != State.QUEUED) {
                return SKIP;
            }
            if (!s.register(this)) {
                return NOT_SENT;
            }
            state = State.WRITING;
            session = s;
            sendStart = now;
        }
        return FrameWriter.encode(new Request.Ping(nonce));
    }

    void answer(Session s, long receivedAt) {
        long rtt;
        synchronized (this) {
            if (state == State.DONE || session != s) {
                return;
            }
            state = State.DONE;
            rtt = receivedAt - sendStart;
        }
        cancelTimer();
        result.complete(rtt);
    }

    @Override
    void lost(Session s, String reason) {
        synchronized (this) {
            if (!((state == State.WRITING || state == State.SENT) && session == s)) {
                return;
            }
        }
        fail("the session broke before the Pong: " + reason);
    }

    @Override
    void abandon(String reason) {
        fail(reason);
    }

    private void fail(String reason) {
        synchronized (this) {
            if (state == State.DONE) {
                return;
            }
            state = State.DONE;
        }
        cancelTimer();
        result.completeExceptionally(new IOException(reason));
    }
}
