package dev.leasehold.server;

import java.util.function.Function;

import dev.leasehold.registry.LockRegistry;

/**
 * How this server's sessions are served and answered, chosen once when the server is wired:
 * {@link #direct()} on a single node, {@link #commitGated(ServingGate)} on a cluster node. Each
 * session gets its own {@link Outbox} of that kind.
 */
public final class Outboxes {

    private static final Outboxes DIRECT = new Outboxes(DirectOutbox::new, null);

    private final Function<ServerSession, Outbox> open;
    /** The cluster node's gate; null on a single node. */
    private final ServingGate gate;

    private Outboxes(Function<ServerSession, Outbox> open, ServingGate gate) {
        this.open = open;
        this.gate = gate;
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
        return new Outboxes(session -> new CommitGatedOutbox(gate, session), gate);
    }

    /**
     * Runs {@code then} (on any thread) once every decision made so far may be shown to a watch
     * (PROTOCOL.md 16.3.4): no earlier than an answer could be. On a single node once the lease
     * horizon covers every lease granted so far (section 8; {@code then.run(false)} if that write
     * failed); in a cluster once everything decided so far has committed ({@code then.run(false)}
     * if it never will). Callbacks of
     * successive calls run in call order, each after those of the answers registered before it.
     */
    void whenShowable(LockRegistry registry, Showable then) {
        if (gate == null) {
            registry.whenLeasesDurable(then::run);
        } else {
            gate.whenCommitted(gate.barrier(), then::run);
        }
    }

    /** Continuation of {@link #whenShowable}: false if the decisions will never be showable (leadership lost). */
    @FunctionalInterface
    interface Showable {
        void run(boolean showable);
    }

    /** The outbox of a new session. */
    Outbox open(ServerSession session) {
        return open.apply(session);
    }
}
