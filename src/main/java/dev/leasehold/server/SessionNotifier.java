package dev.leasehold.server;

import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.Waiter;
import dev.leasehold.registry.WaiterNotifier;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * Writes the answers the registry owes to queued Acquires ({@code A}, {@code T}, {@code B}) on
 * the waiter's own channel: a withdrawn acquire's {@code T} (PROTOCOL.md section 15) takes the same
 * path as one whose wait ran out; decided while its session's {@code W} is read, it joins that
 * read's batch, behind the answers before it. If the channel has closed meanwhile the answer is lost, which is what
 * the protocol expects: a grant to a session that died stays until its lease ends.
 *
 * <h2>The hand-off path: one hop at most</h2>
 * A Release is decided on the releasing session's event loop; the registry hands the granted
 * waiter to {@link #answer} on that same thread, right after the lane lock is released. Then:
 * <ul>
 * <li>the waiter's session is the one being read (a Release granting a waiter of its own
 * session, the usual case for a client that multiplexes its threads over few sessions): the
 * {@code A} joins that session's read batch and leaves with the Release's {@code R} in one write
 * and one flush at the end of the read;</li>
 * <li>on this event loop, no batch pending: written and flushed at once (no task);</li>
 * <li>on another thread (another event loop, the registry timer, the lease-horizon store, a
 * Raft commit): one task on the waiter's event loop, which writes and flushes it. That task is
 * the only hand-off; Netty's own off-loop write would queue the same one. Tasks of one loop run
 * in order, so answers handed over from one thread keep their order, and an {@code X} queued as
 * a task after an {@code A} waiting for the lease horizon stays behind it (PROTOCOL.md section 8).</li>
 * </ul>
 * In cluster mode a grant handed over this way waits for its commit first (the session's
 * {@link Outbox}); in a read batch the batch itself waits. Event loops never block here: nothing
 * waits, the task queue is unbounded.
 *
 * <p>The hand-off gap, from reading the Release to the {@code A} flushed, is reported to
 * {@link RegistryObserver#handedOff} (the {@code leasehold_handoff_seconds} histogram).
 */
public final class SessionNotifier implements WaiterNotifier {

    private final HandoffTimer handoffs;
    /** The two ways an answer leaves outside a read batch; built once, so answering allocates no lambda. */
    private final Consumer<Waiter> writeHere = this::write;
    private final Consumer<Waiter> handOver = this::toLoop;

    /** Hand-offs not timed (tests). */
    public SessionNotifier() {
        this(NanoClock.SYSTEM, RegistryObserver.NONE);
    }

    /**
     * @param clock the registry's clock, which timed the Release that started a hand-off
     * @param observer receives the hand-off gaps
     */
    public SessionNotifier(NanoClock clock, RegistryObserver observer) {
        this.handoffs = new HandoffTimer(clock, observer);
    }

    @Override
    public void answer(Waiter waiter) {
        if (!(waiter.session() instanceof ServerSession session)) {
            return;
        }
        Channel ch = session.channel();
        if (!ch.isActive()) {
            return;
        }
        Waiter.Outcome outcome = waiter.outcome();
        if (outcome == Waiter.Outcome.WAITING || outcome == Waiter.Outcome.DROPPED) {
            return;
        }
        boolean onLoop = ch.eventLoop().inEventLoop();
        if (onLoop && session.batching()) {
            append(session.batch(), waiter);
            if (outcome == Waiter.Outcome.GRANTED && waiter.handoffStartNanos() != Waiter.NO_HANDOFF) {
                session.handoffInBatch(waiter.handoffStartNanos(), handoffs);
            }
            return; // handed to the session's outbox by SessionHandler at the end of the read batch
        }
        session.outbox().answer(waiter, onLoop ? writeHere : handOver, handOver);
    }

    /** The one hand-off: a task on the waiter's event loop that writes and flushes the answer. */
    private void toLoop(Waiter waiter) {
        Channel ch = channel(waiter);
        try {
            ch.eventLoop().execute(() -> {
                if (ch.isActive()) {
                    write(waiter);
                }
            });
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down: the channel is closing, no answer is owed.
        }
    }

    /** Writes and flushes the waiter's answer on its channel's event loop, then times its hand-off. */
    private void write(Waiter waiter) {
        Channel ch = channel(waiter);
        ByteBuf b = ch.alloc().ioBuffer(AnswerType.ACQUIRED.frameBytes());
        append(b, waiter);
        ch.writeAndFlush(b, ch.voidPromise());
        if (waiter.outcome() == Waiter.Outcome.GRANTED) {
            handoffs.flushed(waiter.handoffStartNanos());
        }
    }

    private static Channel channel(Waiter waiter) {
        return ((ServerSession) waiter.session()).channel();
    }

    private static void append(ByteBuf b, Waiter waiter) {
        switch (waiter.outcome()) {
            case GRANTED -> Answers.appendAcquired(b, waiter.owner(), waiter.token(), waiter.queuedMillis());
            case TIMED_OUT -> Answers.appendWithLong(b, AnswerType.TIMED_OUT, waiter.owner());
            case BUSY -> Answers.appendWithLong(b, AnswerType.BUSY, waiter.owner());
            case WAITING, DROPPED -> {
            }
        }
    }
}
