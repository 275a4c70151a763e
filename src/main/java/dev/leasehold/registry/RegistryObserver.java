package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;

/**
 * Hooks for metrics, called on the registry's hot path (some under a lane lock): they must be
 * cheap and must not block or call back into the registry.
 */
public interface RegistryObserver {

    /**
     * A grant in {@code mode} was made; {@code queuedNanos} is receipt to grant (0 for an
     * immediate grant).
     */
    default void granted(HoldMode mode, long queuedNanos, boolean fromQueue) {
    }

    /** A grant in {@code mode} ended after {@code heldNanos}, by Release or by its lease running out. */
    default void ended(HoldMode mode, long heldNanos, boolean expired) {
    }

    /** A shared acquire was answered {@code L}: its limit is not the key's. */
    default void limitMismatch() {
    }

    /** An Acquire was answered {@code T} (at once, or when its wait ran out). */
    default void timedOut() {
    }

    /**
     * A queued acquire was withdrawn by its session ({@code W}, PROTOCOL.md section 15) and
     * answered {@code T} at once. Counted here, not in {@link #timedOut}: its wait did not run out.
     */
    default void withdrawn() {
    }

    /** An Acquire was answered {@code B}. */
    default void busy(BusyReason reason) {
    }

    default void released(ReleaseResult result) {
    }

    default void extended(ExtendResult result) {
    }

    /** A Check was answered: {@code current} for {@code C}, else {@code N}. */
    default void checked(boolean current) {
    }

    /**
     * The {@code A} of a waiter granted by a Release was flushed to its socket {@code gapNanos}
     * after the server read that Release (the hand-off gap). Called by the server's I/O layer on
     * an event loop, not by the registry.
     */
    default void handedOff(long gapNanos) {
    }

    RegistryObserver NONE = new RegistryObserver() {
    };
}
