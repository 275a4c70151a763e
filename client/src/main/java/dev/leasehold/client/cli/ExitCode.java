package dev.leasehold.client.cli;

/**
 * The command line's own exit codes (docs/cli.md). {@code run} and {@code elect} otherwise exit with
 * their command's status. Whenever the command line exits with one of these (but 0), it has written one line on
 * stderr saying why.
 */
enum ExitCode {

    /** Done: acquired, released, extended, pong; or {@code run}'s command exited 0. */
    OK(0),
    /** Bad command line: unknown command or option, bad duration, key or token. */
    USAGE(64),
    /**
     * The key was not granted within the wait ({@code T}: held, or in its lock-delay); no grant exists.
     * {@code elect}: not elected within {@code --wait}; withdrawn from the queue.
     */
    TIMED_OUT(65),
    /** A server limit was reached or it is draining ({@code B}); no grant exists. */
    BUSY(66),
    /** The request may have reached the server, and no definitive answer came. */
    INDETERMINATE(67),
    /**
     * The server could not be reached: the request was never sent. For {@code inspect} and
     * {@code top}: the management port did not answer, does not expose {@code locks} (or refuses
     * this caller: a default server answers only callers on its own host), or this
     * node is not the serving leader.
     */
    UNAVAILABLE(68),
    /**
     * {@code run}: the lease was lost or could not be extended in time; {@code elect}: the term was
     * lost so. The command was stopped.
     */
    LOCK_LOST(69),
    /** {@code release}, {@code extend}, {@code check}: the token is not the key's active grant. */
    NOT_HELD(70),
    /** An unexpected failure of the command line itself (a bug). */
    INTERNAL(71),
    /** {@code cluster}: the server refused the change (the line says why); nothing was changed. */
    REFUSED(72),
    /**
     * The server's ACL does not let this client use the key ({@code X 7}); no grant exists, and
     * trying again will not help until the ACL or the client certificate changes.
     */
    FORBIDDEN(73),
    /**
     * {@code --shared}: the key's shared holds use another {@code --limit} ({@code L}); no grant
     * exists. A configuration error: retrying will not help.
     */
    LIMIT_MISMATCH(74),
    /** {@code run}, {@code elect}: the command could not be started (not found, not executable). */
    CANNOT_START(127);

    private final int code;

    ExitCode(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }
}
