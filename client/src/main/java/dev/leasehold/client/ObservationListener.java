package dev.leasehold.client;

/**
 * Hears an {@link Observation}'s events (PROTOCOL.md 9.15). Called on a client delivery thread,
 * never an I/O thread, one call at a time per observation, in order. A slow listener misses
 * intermediate states, never the latest: the client keeps one undelivered event per observation,
 * the newest, marked {@link KeyEvent#coalesced()}. No call begins after {@link Observation#close()}
 * returned.
 */
public interface ObservationListener {

    /** The key's state changed (or, first, what it is now). */
    void event(KeyEvent event);

    /**
     * The key's state is not known now (the session to the leader broke, the leader lost its
     * leadership, the server refused or cannot take the subscription, the client closed). Told
     * once per gap; the next {@link #event} ends it. Never act on the last event meanwhile.
     *
     * @param reason for logs
     */
    void unknown(String reason);
}
