package dev.leasehold.server;

import java.util.function.Consumer;

import dev.leasehold.registry.Waiter;
import io.netty.channel.ChannelHandlerContext;

/**
 * When one session is served and when its answers leave: the one place where single-node and
 * cluster mode differ on the answer path. Chosen once per server ({@link Outboxes}), one per
 * session, so {@link SessionHandler} and {@link SessionNotifier} never ask which mode runs.
 * <ul>
 * <li>{@link DirectOutbox} (single node): every request is served, every answer is written at
 * once;</li>
 * <li>{@link CommitGatedOutbox} (cluster, PROTOCOL.md section 10): only the leader serves, in one
 * epoch per session, and an answer is written once the decisions behind it have committed.</li>
 * </ul>
 * Event loop only, except {@link #answer}.
 */
interface Outbox {

    /**
     * Called for every request read, before it is served: the {@code X} to answer instead of
     * serving it (the session then closes), or null to serve it.
     */
    ProtocolError refusal(Object request);

    /** The read batch reached {@link ServerSession#BATCH_LIMIT}: hand it on (not necessarily flushed). */
    void batchFull(ChannelHandlerContext ctx);

    /** The read batch is done (or an {@code X} follows): its answers go out, flushed, when they may. */
    void flush(ChannelHandlerContext ctx);

    /** Runs {@code action} on the event loop after every answer already handed to {@link #flush}. */
    void after(ChannelHandlerContext ctx, Runnable action);

    /**
     * A queued Acquire's answer, decided outside this session's read batch, on any thread: sent
     * through {@code now} at once, or through {@code later} (safe from any thread) once the
     * decision behind it has committed; dropped if it never commits.
     */
    void answer(Waiter waiter, Consumer<Waiter> now, Consumer<Waiter> later);

    /**
     * This node stopped serving: the {@code X} that closes the session (PROTOCOL.md section 10:
     * {@code X 9} on every open session), or null if this mode never stops serving.
     */
    ProtocolError stoppedServing();
}
