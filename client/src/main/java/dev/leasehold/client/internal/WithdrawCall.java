package dev.leasehold.client.internal;

import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * A Withdraw ({@code W owner key}, PROTOCOL.md section 15) of an acquire whose caller stopped
 * waiting (9.14): written on the acquire's own session and nowhere else, because a {@code W}
 * names only its own session's waiters. It has no answer of its own: the withdrawn acquire gets
 * its one answer ({@code T}, or an {@code A} when the grant came first, which the acquire
 * releases). Its result says only whether it was written.
 */
final class WithdrawCall extends Outbound<Boolean> {

    private final long owner;
    private final byte[] key;

    WithdrawCall(Engine engine, long owner, byte[] key) {
        super(engine);
        this.owner = owner;
        this.key = key;
    }

    @Override
    Boolean tooLate(Link s, long now) {
        return null;
    }

    @Override
    byte[] encode(long now) {
        return FrameWriter.encode(new Request.Withdraw(owner, key));
    }

    @Override
    void afterWritten(Link s) {
        decide(() -> Boolean.TRUE);
    }

    /** Never sent elsewhere: a broken session dropped the waiter anyway (9.14). */
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
