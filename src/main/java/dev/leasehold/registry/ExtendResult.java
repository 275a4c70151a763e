package dev.leasehold.registry;

/** Answer to an Extend: {@code E} or {@code N}. */
public enum ExtendResult {
    EXTENDED,
    /** The token is not the key's active grant (released, lease over, or never issued). */
    NOT_HELD
}
