package dev.leasehold.client.internal;

/**
 * What a request sees of the session that carries its current attempt: a place to register for
 * its answer, and the one thing a request may do to a session, give it up. {@link Session} is
 * the real one; unit tests drive requests over a stub.
 */
interface Link {

    /** Registers {@code o} for its answer (by owner, token or nonce); false if the session has closed. */
    boolean register(Outbound<?> o);

    /**
     * Closes this exact session: the server drops its queued Acquires, possibly sent requests on
     * it are lost, queued ones are offered to other sessions. Idempotent.
     */
    void close(String reason);

    /**
     * The longest {@code wait_ms} an {@code M} may carry on this session (the server's
     * {@code max_wait_ms} from its Hello), or -1 on a 1.3 session, which takes no 1.4 frame
     * (PROTOCOL.md 9.13).
     */
    default long maxWaitMillis() {
        return -1;
    }

    /**
     * The longest value an {@code M} or {@code V} may carry on this session (the server's
     * {@code max_value_bytes} from its Hello, 0 when values are off), or -1 on a 1.3 session.
     */
    default int maxValueBytes() {
        return -1;
    }

    /**
     * Queues {@code o} on this exact session and nowhere else (a Withdraw names only its own
     * session's waiters, 9.14); false if the session has closed.
     */
    default boolean sendHere(Outbound<?> o) {
        return false;
    }
}
