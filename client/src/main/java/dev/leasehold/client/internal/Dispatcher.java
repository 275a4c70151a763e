package dev.leasehold.client.internal;

import java.util.List;

/**
 * Where a definitely-not-sent request is offered to a session. {@link SessionPool} is the real
 * one; unit tests record what was submitted and play the session themselves.
 */
interface Dispatcher {

    /** Offers a definitely-not-sent request to a session (or holds it until one can take it). */
    void submit(Outbound<?> o);

    /**
     * As {@link #submit(Outbound)}; {@code callerWrites}: the calling thread is a blocked caller
     * that may write the request itself when its session is idle ({@link Session#enqueue(Outbound, boolean)}).
     */
    default void submit(Outbound<?> o, boolean callerWrites) {
        submit(o);
    }

    /**
     * Whether an acquire started now keeps its wait to the millisecond (a 1.4 session is expected)
     * rather than rounding it up to whole seconds (1.3). Unit-test dispatchers: false.
     */
    default boolean millisecondWaits() {
        return false;
    }

    /** Why the last session that never came up failed (e.g. a TLS handshake), or null. */
    String lastSetupFailure();

    /** Sessions currently open (diagnostics and tests). */
    List<Session> sessions();

    /** Closes every session and abandons held requests; returns the sessions whose threads to join. */
    List<Session> close();
}
