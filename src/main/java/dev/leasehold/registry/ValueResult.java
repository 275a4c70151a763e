package dev.leasehold.registry;

/** Answer to a set value ({@code V}, PROTOCOL.md section 17): {@code V} or {@code N}. */
public enum ValueResult {
    /**
     * The token is the key's active exclusive grant, and its value is now a different one
     * ({@code V}; an event, 17.2).
     */
    SET_CHANGED,
    /** The token is the key's active exclusive grant, which already had that value ({@code V}; no event). */
    SET_UNCHANGED,
    /** The token is not the key's active exclusive grant (ended, delayed, never issued, shared, 0): {@code N}. */
    NOT_HELD;

    /** True when answered {@code V}. */
    public boolean isSet() {
        return this != NOT_HELD;
    }
}
