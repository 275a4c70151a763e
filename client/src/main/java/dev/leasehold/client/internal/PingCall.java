package dev.leasehold.client.internal;

import java.io.IOException;

import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * A Ping: completes with the round-trip time in nanoseconds, from just before the write to the
 * decoded Pong, or fails with an {@link IOException} when no Pong came by its deadline or its
 * session broke. A Ping that was definitely not sent moves to another session like any request.
 */
public final class PingCall extends Outbound<Long> {

    private final long nonce;
    private final long deadline;

    PingCall(Engine engine, long nonce, long deadline) {
        super(engine);
        this.nonce = nonce;
        this.deadline = deadline;
    }

    void start() {
        armCallTimer(() -> fail(new IOException("no Pong before the ping's deadline")), deadline);
    }

    public long nonce() {
        return nonce;
    }

    @Override
    Long tooLate(Link s, long now) {
        return null; // the deadline timer ends a ping
    }

    @Override
    byte[] encode(long now) {
        return FrameWriter.encode(new Request.Ping(nonce));
    }

    void answer(Link s, long receivedAt) {
        decide(() -> session == s ? receivedAt - sendStart : null);
    }

    @Override
    void lost(Link s, String reason) {
        boolean lost;
        synchronized (this) {
            lost = onWire(s);
        }
        if (lost) {
            fail(new IOException("the session broke before the Pong: " + reason));
        }
    }

    @Override
    void abandon(String reason) {
        fail(new IOException(reason));
    }
}
