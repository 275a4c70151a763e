package dev.leasehold.server;

import java.util.concurrent.RejectedExecutionException;

import dev.leasehold.protocol.AnswerType;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.Waiter;
import dev.leasehold.registry.WaiterNotifier;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * Writes the answers the registry owes to queued Acquires ({@code A}, {@code T}, {@code B}) on
 * the waiter's own channel. If the channel has closed meanwhile the answer is lost, which is what
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
 * Event loops never block here: nothing waits, the task queue is unbounded.
 *
 * <p>The hand-off gap, from reading the Release to the {@code A} flushed, is reported to
 * {@link RegistryObserver#handedOff} (the {@code leasehold_handoff_seconds} histogram).
 */
public final class SessionNotifier implements WaiterNotifier {

    private final ServingGate gate;
    private final HandoffTimer handoffs;

    /** Single-node mode, hand-offs not timed (tests). */
    public SessionNotifier() {
        this(ServingGate.SINGLE_NODE, NanoClock.SYSTEM, RegistryObserver.NONE);
    }

    /** Hand-offs not timed (tests). @param gate as in {@link #SessionNotifier(ServingGate, NanoClock, RegistryObserver)} */
    public SessionNotifier(ServingGate gate) {
        this(gate, NanoClock.SYSTEM, RegistryObserver.NONE);
    }

    /**
     * @param gate cluster mode: a grant is written only once it has committed; {@code T} and
     *             {@code B} change nothing and go at once
     * @param clock the registry's clock, which timed the Release that started a hand-off
     * @param observer receives the hand-off gaps
     */
    public SessionNotifier(ServingGate gate, NanoClock clock, RegistryObserver observer) {
        this.gate = gate;
        this.handoffs = new HandoffTimer(clock, observer);
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
        Waiter.Outcome outcome = waiter.outcome();
        if (outcome == Waiter.Outcome.WAITING || outcome == Waiter.Outcome.DROPPED) {
            return;
        }
        boolean onLoop = ch.eventLoop().inEventLoop();
        if (onLoop && session.batching()) {
            // In cluster mode the batch itself waits for the commit (Session#flushBatch).
            append(session.batch(), waiter);
            if (outcome == Waiter.Outcome.GRANTED && waiter.handoffStartNanos() != Waiter.NO_HANDOFF) {
                session.handoffInBatch(waiter.handoffStartNanos(), handoffs);
            }
            return; // written and flushed by SessionHandler at the end of the read batch
        }
        if (outcome != Waiter.Outcome.GRANTED || gate == ServingGate.SINGLE_NODE) {
            if (onLoop) {
                write(ch, waiter);
            } else {
                toLoop(ch, waiter);
            }
            return;
        }
        gate.whenCommitted(gate.barrier(), committed -> {
            if (committed) {
                toLoop(ch, waiter);
            }
        });
    }

    /** The one hand-off: a task on the waiter's event loop that writes and flushes the answer. */
    private void toLoop(Channel ch, Waiter waiter) {
        try {
            ch.eventLoop().execute(() -> {
                if (ch.isActive()) {
                    write(ch, waiter);
                }
            });
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down: the channel is closing, no answer is owed.
        }
    }

    /** Writes and flushes the waiter's answer on its channel's event loop, then times its hand-off. */
    private void write(Channel ch, Waiter waiter) {
        ByteBuf b = ch.alloc().ioBuffer(AnswerType.ACQUIRED.frameBytes());
        append(b, waiter);
        ch.writeAndFlush(b, ch.voidPromise());
        if (waiter.outcome() == Waiter.Outcome.GRANTED) {
            handoffs.flushed(waiter.handoffStartNanos());
        }
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
