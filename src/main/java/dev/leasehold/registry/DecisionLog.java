package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;

/**
 * Receives every state-changing decision of the registry, in the order the decisions were made
 * for each key: the cluster's proposer turns them into Raft log entries (PROTOCOL.md section 10),
 * and the answers that depend on them wait until they have committed. Single-node mode uses
 * {@link #NONE}.
 *
 * <p>Called under a lane lock: implementations append to memory and never block.
 */
public interface DecisionLog {

    /**
     * {@code token} was granted on {@code key} for {@code leaseSeconds}, holding it in
     * {@code mode} (PROTOCOL.md sections 3 and 13). Its Release, Extend, expiry, delay end and
     * Check are the other decisions here, by its token, whatever the mode.
     *
     * @param value the grant's value (its {@code M}'s, PROTOCOL.md 17.2; exclusive only), or null for none
     */
    void granted(byte[] key, long token, int leaseSeconds, HoldMode mode, byte[] value);

    /**
     * A set value ({@code V}) of {@code token} was decided, whether it was the key's active exclusive
     * grant or not (as a Release): logged so that its answer, {@code V} or {@code N}, waits for a
     * commit made after it (PROTOCOL.md 17.6).
     *
     * @param value the new value, empty to clear it
     */
    void valueSet(byte[] key, long token, byte[] value);

    /** A Release of {@code token} was decided (whether it was the active grant or not). */
    void released(byte[] key, long token);

    /** An Extend of {@code token} was decided (whether it was the active grant or not). */
    void extended(byte[] key, long token, int leaseSeconds);

    /**
     * The lease of {@code token} ran out; the key (for a shared grant: its slot) is now in
     * lock-delay for {@code delaySeconds} (0: no lock-delay, free for the next waiter at once).
     */
    void expired(byte[] key, long token, int delaySeconds);

    /** The lock-delay after {@code token}'s expiry ended: the key (or that shared slot) may be granted again. */
    void delayEnded(byte[] key, long token);

    /**
     * A Check of {@code token} was decided. It changes no state; the cluster logs it as a no-op
     * entry whose commit proves this node still led after the Check arrived (PROTOCOL.md
     * section 11), so its answer waits for that commit like any other.
     */
    void checked(byte[] key, long token);

    /**
     * A watch of {@code key} starts (PROTOCOL.md 16.8): a no-op entry, as for a Check, whose
     * commit the watch's first event waits for.
     *
     * @return false if it could not be logged (the replication queue is full): the {@code O} gets {@code B}
     */
    default boolean observed(byte[] key) {
        checked(key, 0);
        return true;
    }

    /** Single-node mode: nothing is replicated. */
    DecisionLog NONE = new DecisionLog() {
        @Override
        public void granted(byte[] key, long token, int leaseSeconds, HoldMode mode, byte[] value) {
        }

        @Override
        public void valueSet(byte[] key, long token, byte[] value) {
        }

        @Override
        public void released(byte[] key, long token) {
        }

        @Override
        public void extended(byte[] key, long token, int leaseSeconds) {
        }

        @Override
        public void expired(byte[] key, long token, int delaySeconds) {
        }

        @Override
        public void delayEnded(byte[] key, long token) {
        }

        @Override
        public void checked(byte[] key, long token) {
        }
    };
}
