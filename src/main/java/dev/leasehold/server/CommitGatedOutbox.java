package dev.leasehold.server;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.Waiter;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;

/**
 * Cluster mode (PROTOCOL.md section 10): only the leader serves lock requests, a session only in
 * the epoch it was first served in, and an answer that reflects a state change is written once
 * the decisions behind it have committed.
 *
 * <h2>X 8 or X 9</h2>
 * A session is <em>served as leader</em> from the first request read while this node serves,
 * a Ping or Hello included (its answer came from the leader). Lock requests are the keyed ones:
 * {@code A R E C S}, and from 1.4 {@code M}, {@code W}, {@code V} and {@code O} (a follower answers them
 * {@code X 8}; every node answers {@code U}, PROTOCOL.md 16.8). A lock request this node does not serve gets
 * {@code X 9} on a session served as leader, {@code X 8} on any other (nothing of it was
 * executed). The epoch is read once per request ({@link ServingGate#servingEpoch()}), so a
 * request read in the instant the node stops serving is either served in the epoch that ends
 * (and the session gets {@code X 9} with the other sessions of that epoch) or refused with
 * {@code X 9}: never {@code X 8} on a session this node served.
 *
 * <h2>Deferred batches</h2>
 * A read batch whose decisions have not committed waits for its barrier. Deferred batches keep
 * their order: each waits for a barrier at least as high as the one before, and callbacks for
 * increasing barriers run in order onto this event loop. If the decisions never commit the batch
 * is dropped: the node lost its leadership and closes the session with {@code X 9}. When more
 * than {@value #MAX_DEFERRED} batches wait, the session is not read until half of them are out.
 */
final class CommitGatedOutbox implements Outbox {

    /** Read batches waiting for a commit before the session stops being read. */
    private static final int MAX_DEFERRED = 64;

    private final ServingGate gate;
    private final ServerSession session;
    /** The epoch in which a request of this session was first read while this node served; 0 before. */
    private long epoch;
    /** True once a lock request was served: until then the batches hold only Pongs. */
    private boolean servedLocks;
    /** Batches handed to the gate and not yet written. */
    private int deferred;
    /** A flush of written deferred batches is queued on the event loop ({@link #flushSoon}). */
    private boolean flushQueued;
    /** Hand-offs of deferred batches written and not yet flushed: timed when the flush runs. */
    private final List<HandoffTimer.Pending> unflushedHandoffs = new ArrayList<>();

    CommitGatedOutbox(ServingGate gate, ServerSession session) {
        this.gate = gate;
        this.session = session;
    }

    @Override
    public ProtocolError refusal(Object request) {
        long now = gate.servingEpoch();
        boolean lock = request instanceof Request.Keyed;
        if (now != 0 && (epoch == 0 || epoch == now)) {
            epoch = now;
            servedLocks |= lock;
            return null;
        }
        if (!lock) {
            return null; // every node answers Ping, Hello and Unobserve (PROTOCOL.md 14.5, 16.8)
        }
        return new ProtocolError(epoch == 0 ? ErrorCode.NOT_LEADER : ErrorCode.LEADERSHIP_LOST, gate.leaderHint());
    }

    @Override
    public void batchFull(ChannelHandlerContext ctx) {
        flush(ctx);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        ByteBuf b = session.takeBatch();
        if (b == null) {
            ctx.flush();
            return;
        }
        if (!servedLocks) {
            // Only Pongs, which reflect no state, and no deferred batch to stay behind.
            ctx.writeAndFlush(b, ctx.voidPromise());
            return;
        }
        if (epoch != gate.servingEpoch()) {
            b.release(); // decided in an epoch that has ended: the session gets X 9, not answers
            session.dropHandoffs();
            return;
        }
        long barrier = gate.barrier();
        if (deferred == 0 && gate.committed(barrier)) {
            ctx.writeAndFlush(b, ctx.voidPromise());
            session.handoffsFlushed();
            return;
        }
        HandoffTimer.Pending handoffs = session.takeHandoffs(); // timed when the batch is written
        Channel channel = ctx.channel();
        deferred++;
        if (deferred > MAX_DEFERRED) {
            channel.config().setAutoRead(false); // commits are behind: stop reading this session
        }
        gate.whenCommitted(barrier, committed -> ctx.executor().execute(() -> {
            deferred--;
            if (committed && channel.isActive()) {
                ctx.write(b, ctx.voidPromise());
                flushSoon(ctx, handoffs);
            } else {
                b.release();
            }
            if (deferred <= MAX_DEFERRED / 2 && channel.isWritable() && !channel.config().isAutoRead()) {
                channel.config().setAutoRead(true);
                ctx.read();
            }
        }));
    }

    /**
     * One flush for the deferred batches of one commit: a commit releases every batch of this
     * session that waited for it, each as its own event-loop task, queued together; the flush task
     * queued behind the first of them runs after them all, so they leave in one write instead of
     * one system call each (bench/NOTES.md, "Answer delivery"). On this event loop only.
     */
    private void flushSoon(ChannelHandlerContext ctx, HandoffTimer.Pending handoffs) {
        if (handoffs != null) {
            unflushedHandoffs.add(handoffs);
        }
        if (flushQueued) {
            return;
        }
        flushQueued = true;
        ctx.executor().execute(() -> {
            flushQueued = false;
            ctx.flush();
            for (HandoffTimer.Pending h : unflushedHandoffs) {
                h.flushed();
            }
            unflushedHandoffs.clear();
        });
    }

    @Override
    public void after(ChannelHandlerContext ctx, Runnable action) {
        if (deferred == 0) {
            action.run();
            return;
        }
        gate.whenCommitted(gate.barrier(), committed -> ctx.executor().execute(action));
    }

    @Override
    public void answer(Waiter waiter, Consumer<Waiter> now, Consumer<Waiter> later) {
        if (waiter.outcome() != Waiter.Outcome.GRANTED) {
            now.accept(waiter); // T and B change nothing: no entry, no wait
            return;
        }
        gate.whenCommitted(gate.barrier(), committed -> {
            if (committed) {
                later.accept(waiter);
            }
        });
    }

    @Override
    public ProtocolError stoppedServing() {
        return new ProtocolError(ErrorCode.LEADERSHIP_LOST, gate.leaderHint());
    }
}
