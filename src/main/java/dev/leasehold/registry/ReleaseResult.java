package dev.leasehold.registry;

/** Answer to a Release: {@code R} or {@code N}. */
public enum ReleaseResult {
    RELEASED,
    /** The token is not the key's active grant (released, lease over, or never issued). */
    NOT_HELD
}
