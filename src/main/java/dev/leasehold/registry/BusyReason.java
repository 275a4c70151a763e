package dev.leasehold.registry;

/** Why an Acquire was answered {@code B}: the server did not and will not grant it. */
public enum BusyReason {
    /** The key's wait queue is at {@code max-waiters-per-key}. */
    KEY_QUEUE("key_queue"),
    /** All wait queues together are at {@code max-waiters-total}. */
    TOTAL_WAITERS("total_waiters"),
    /** The session already has {@code max-pending-per-session} Acquires waiting. */
    SESSION("session"),
    /** Granting would pass {@code max-held-keys}. */
    HELD_KEYS("held_keys"),
    /** The server is draining for shutdown. */
    DRAINING("draining"),
    /** No durable fencing token (or lease horizon) could be issued: the data directory is failing. */
    STORAGE("storage"),
    /**
     * Cluster mode: the replication queue is full ({@code leasehold.cluster.max-pending}) or this
     * node has just stopped serving, so no token was issued and nothing was proposed. Its own
     * reason because the cure differs from {@link #STORAGE}: the Raft log is slow to commit (a
     * slow follower disk or network, a starved leader), not this node's data directory.
     */
    REPLICATION("replication"),
    /** Shared slots plus shared waiters over all keys are at {@code max-shared-total} (PROTOCOL.md 13.6). */
    SHARED_TOTAL("shared_total");

    private final String tag;

    BusyReason(String tag) {
        this.tag = tag;
    }

    /** Short lower-case name, used as a metric tag. */
    public String tag() {
        return tag;
    }
}
