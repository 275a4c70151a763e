package dev.leasehold.server;

import java.util.function.Consumer;

import dev.leasehold.registry.Waiter;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/** Single node: every request is served and every answer is written at once. */
final class DirectOutbox implements Outbox {

    private final ServerSession session;

    DirectOutbox(ServerSession session) {
        this.session = session;
    }

    @Override
    public ProtocolError refusal(Object request) {
        return null;
    }

    @Override
    public void batchFull(ChannelHandlerContext ctx) {
        write(ctx);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        write(ctx);
        ctx.flush();
        session.handoffsFlushed();
    }

    private void write(ChannelHandlerContext ctx) {
        ByteBuf b = session.takeBatch();
        if (b != null) {
            ctx.write(b, ctx.voidPromise());
        }
    }

    @Override
    public void after(ChannelHandlerContext ctx, Runnable action) {
        action.run();
    }

    @Override
    public void answer(Waiter waiter, Consumer<Waiter> now, Consumer<Waiter> later) {
        now.accept(waiter);
    }

    @Override
    public ProtocolError stoppedServing() {
        return null;
    }
}
