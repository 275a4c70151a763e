package dev.leasehold.client.internal;

import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * A request written on one session and nowhere else, whose result says only whether it was
 * written: a Withdraw ({@code W owner key}, PROTOCOL.md section 15) of an acquire whose caller
 * stopped waiting (9.14), which names only its own session's waiters and has no answer of its own
 * (the withdrawn acquire gets its one answer: {@code T}, or an {@code A} when the grant came first,
 * which the acquire releases); or an Unobserve ({@code U watch}, 16.1) of a closed observation's
 * watch, which lives on its session, and whose answer ends the watch's {@link ObserveCall}.
 */
final class SessionOnlyCall extends Outbound<Boolean> {

    private final Request request;

    private SessionOnlyCall(Engine engine, Request request) {
        super(engine);
        this.request = request;
    }

    static SessionOnlyCall withdraw(Engine engine, long owner, byte[] key) {
        return new SessionOnlyCall(engine, new Request.Withdraw(owner, key));
    }

    static SessionOnlyCall unobserve(Engine engine, long watch) {
        return new SessionOnlyCall(engine, new Request.Unobserve(watch));
    }

    @Override
    Boolean tooLate(Link s, long now) {
        return null;
    }

    @Override
    byte[] encode(long now) {
        return FrameWriter.encode(request);
    }

    @Override
    void afterWritten(Link s) {
        decide(() -> Boolean.TRUE);
    }

    /** Never sent elsewhere: a broken session dropped the waiter (9.14) or ended the watch anyway. */
    @Override
    boolean resendable() {
        return false;
    }

    @Override
    void lost(Link s, String reason) {
        decide(() -> Boolean.FALSE);
    }

    @Override
    void abandon(String reason) {
        decide(() -> Boolean.FALSE);
    }
}
