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
}
