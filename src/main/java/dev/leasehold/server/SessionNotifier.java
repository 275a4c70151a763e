package dev.leasehold.server;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.registry.Waiter;
import dev.leasehold.registry.WaiterNotifier;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * Writes the answers the registry owes to queued Acquires ({@code A}, {@code T}, {@code B}) on
 * the waiter's own channel. Called from any thread; Netty moves the write to the channel's event
 * loop. If the channel has closed meanwhile the answer is lost, which is what the protocol
 * expects: a grant to a session that died stays until its lease ends.
 *
 * <p>When called on the channel's own event loop while that session's read batch has answers
 * pending (a Release on a session granting a waiter of the same session, for example), the
 * answer joins the batch instead, so it is written with them and keeps its place after them.
 */
public final class SessionNotifier implements WaiterNotifier {

    private final ServingGate gate;

    /** Single-node mode. */
    public SessionNotifier() {
        this(ServingGate.SINGLE_NODE);
    }

    /**
     * @param gate cluster mode: a grant is written only once it has committed; {@code T} and
     *             {@code B} change nothing and go at once
     */
    public SessionNotifier(ServingGate gate) {
        this.gate = gate;
    }

    @Override
    public void answer(Waiter waiter) {
        if (!(waiter.session() instanceof Session session)) {
            return;
        }
        Channel ch = session.channel();
        if (!ch.isActive()) {
            return;
        }
        if (ch.eventLoop().inEventLoop() && session.batching()) {
            ByteBuf batch = session.batch();
            switch (waiter.outcome()) {
                case GRANTED -> Answers.appendAcquired(batch, waiter.owner(), waiter.token(), waiter.queuedMillis());
                case TIMED_OUT -> Answers.appendWithLong(batch, AnswerType.TIMED_OUT, waiter.owner());
                case BUSY -> Answers.appendWithLong(batch, AnswerType.BUSY, waiter.owner());
                case WAITING, DROPPED -> {
                }
            }
            return; // written and flushed by SessionHandler at the end of the read batch
        }
        ByteBuf answer = switch (waiter.outcome()) {
            case GRANTED -> Answers.acquired(ch.alloc(), waiter.owner(), waiter.token(), waiter.queuedMillis());
            case TIMED_OUT -> Answers.withLong(ch.alloc(), AnswerType.TIMED_OUT, waiter.owner());
            case BUSY -> Answers.withLong(ch.alloc(), AnswerType.BUSY, waiter.owner());
            case WAITING, DROPPED -> null;
        };
        if (answer == null) {
            return;
        }
        if (waiter.outcome() != Waiter.Outcome.GRANTED || gate == ServingGate.SINGLE_NODE) {
            ch.writeAndFlush(answer, ch.voidPromise());
            return;
        }
        gate.whenCommitted(gate.barrier(), committed -> {
            if (committed) {
                ch.writeAndFlush(answer, ch.voidPromise());
            } else {
                answer.release();
            }
        });
    }
}
