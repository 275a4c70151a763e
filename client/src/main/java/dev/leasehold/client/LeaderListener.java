package dev.leasehold.client;

/**
 * Hears who leads an {@link Election} ({@link Election#observe}, and every {@link Campaign}):
 * pushed by the server's events on the key (PROTOCOL.md 9.15), never polled. Called one at a time,
 * in order, on a client delivery thread; keep it short. An observed leader is for routing and
 * display, not a grant: it may already have stepped down when the call runs.
 */
public interface LeaderListener {

    /**
     * A new term began: once per term, terms strictly increasing.
     *
     * @param term the new leader's fencing token
     * @param identity the value its grant carries (its campaign identity), as UTF-8 text
     */
    void onNewLeader(long term, String identity);

    /**
     * The leader of {@code term} proclaimed a new value ({@link Leadership#proclaim}). Optional.
     *
     * @param term the leader's term
     * @param value the new value as UTF-8 text
     */
    default void onProclaimed(long term, String value) {
    }

    /** Nobody leads now (the last term was resigned or expired and no candidate was waiting). Optional. */
    default void onNoLeader() {
    }

    /**
     * Who leads cannot be known now (the observation's session broke, the server restarted and is
     * in its recovery grace); the next call ends the gap ({@link #onProclaimed} when the same
     * term still leads). Optional.
     *
     * @param reason for logs
     */
    default void onLeaderUnknown(String reason) {
    }
}
