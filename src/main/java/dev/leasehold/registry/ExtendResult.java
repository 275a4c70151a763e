package dev.leasehold.registry;

/** Answer to an Extend: {@code E} or {@code N}. */
public enum ExtendResult {
    EXTENDED,
    /**
     * Extended in memory, but the new lease end passes the stored lease horizon: answer {@code E}
     * only after {@link LockRegistry#whenLeasesDurable} reports it on disk ({@code N} if that fails),
     * and answer nothing after it on the same session before then.
     */
    EXTENDED_AFTER_WRITE,
    /** The token is not the key's active grant (released, lease over, or never issued). */
    NOT_HELD
}
