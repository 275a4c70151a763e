package dev.leasehold.client.internal;

import dev.leasehold.protocol.FrameWriter;
import dev.leasehold.protocol.Request;

/**
 * An Unobserve ({@code U watch}, PROTOCOL.md 16.1) of a closed observation's watch, written on the
 * watch's own session and nowhere else (a watch lives on its session). Its answer {@code U watch}
 * ends the watch's {@link ObserveCall}; its result says only whether it was written.
 */
final class UnobserveCall extends Outbound<Boolean> {

    private final long watch;

    UnobserveCall(Engine engine, long watch) {
        super(engine);
        this.watch = watch;
    }

    @Override
    Boolean tooLate(Link s, long now) {
        return null;
    }

    @Override
    byte[] encode(long now) {
        return FrameWriter.encode(new Request.Unobserve(watch));
    }

    @Override
    void afterWritten(Link s) {
        decide(() -> Boolean.TRUE);
    }

    /** Never sent elsewhere: a broken session ended the watch anyway. */
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
