package dev.leasehold.client;

/**
 * A read lock or semaphore view was refused with {@code L} (PROTOCOL.md section 13.2): the key's
 * shared holds use another limit (another deployment uses the key as a semaphore of another
 * size, or as a read lock). A configuration error to fix, never retried.
 */
public final class SharedLimitException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final int requested;
    private final int keyLimit;

    SharedLimitException(String key, AcquireOutcome.LimitMismatch m) {
        super("key " + Keys.quoted(key) + ": asked for limit " + m.requested() + ", but its shared holds use limit "
                + m.keyLimit() + " (0 = read lock)");
        this.requested = m.requested();
        this.keyLimit = m.keyLimit();
    }

    /** The limit this client asked for (0 = read lock). */
    public int requested() {
        return requested;
    }

    /** The limit the key's shared holds use. */
    public int keyLimit() {
        return keyLimit;
    }
}
