package dev.leasehold.spring.integration;

import org.springframework.context.ApplicationEvent;

import dev.leasehold.client.LossReason;

/**
 * Published (when the registry has an {@link org.springframework.context.ApplicationEventPublisher})
 * when a held lock loses its lease; see {@link LeaseLostListener}.
 */
public class LeaseholdLeaseLostEvent extends ApplicationEvent {

    private final String lockKey;
    private final long token;
    private final LossReason reason;

    /**
     * @param registry the registry whose lock lost its lease
     * @param lockKey the key as given to {@code obtain}
     * @param token the fencing token of the lost grant
     * @param reason why it was lost
     */
    public LeaseholdLeaseLostEvent(LeaseholdLockRegistry registry, String lockKey, long token, LossReason reason) {
        super(registry);
        this.lockKey = lockKey;
        this.token = token;
        this.reason = reason;
    }

    /** The key as given to {@code obtain}. */
    public String getLockKey() {
        return lockKey;
    }

    /** The fencing token of the lost grant. */
    public long getToken() {
        return token;
    }

    /** Why the lease was lost. */
    public LossReason getReason() {
        return reason;
    }
}
