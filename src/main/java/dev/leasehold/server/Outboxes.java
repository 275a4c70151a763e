package dev.leasehold.server;

import java.util.function.Function;

/**
 * How this server's sessions are served and answered, chosen once when the server is wired:
 * {@link #direct()} on a single node, {@link #commitGated(ServingGate)} on a cluster node. Each
 * session gets its own {@link Outbox} of that kind.
 */
public final class Outboxes {

    private static final Outboxes DIRECT = new Outboxes(DirectOutbox::new);

    private final Function<ServerSession, Outbox> open;

    private Outboxes(Function<ServerSession, Outbox> open) {
        this.open = open;
    }

    /** Single node: every request is served and answered at once. */
    public static Outboxes direct() {
        return DIRECT;
    }

    /**
     * Cluster mode (PROTOCOL.md section 10): only while {@code gate} serves, and answers written
     * once the decisions behind them have committed.
     */
    public static Outboxes commitGated(ServingGate gate) {
        if (gate == null) {
            throw new IllegalArgumentException("a commit-gated server needs its cluster node's gate");
        }
        return new Outboxes(session -> new CommitGatedOutbox(gate, session));
    }

    /** The outbox of a new session. */
    Outbox open(ServerSession session) {
        return open.apply(session);
    }
}
