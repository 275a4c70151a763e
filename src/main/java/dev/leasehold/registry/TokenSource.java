package dev.leasehold.registry;

/**
 * Issues fencing tokens. Every token returned must be strictly greater than every token issued
 * before by this data directory, across restarts and crashes, so an implementation persists a
 * high-water mark <em>before</em> handing out tokens below it.
 *
 * <p>Called under a registry lane lock: it must not block. When no durable token is available
 * right now (the high-water mark could not be persisted in time), it returns {@link #NONE} and
 * the Acquire is answered Busy, with the reason {@link #noneReason()}.
 */
@FunctionalInterface
public interface TokenSource {

    long NONE = 0;

    /** The next token, or {@link #NONE}. Never blocks. */
    long next();

    /**
     * Why {@link #next()} returns {@link #NONE}: the reason the refused Acquire is counted under
     * ({@code leasehold_busy_total{reason}}). A durable store that could not persist its
     * high-water mark in time means {@link BusyReason#STORAGE}, the default; the cluster's
     * proposer means {@link BusyReason#REPLICATION}. The wire answer is {@code B} either way.
     */
    default BusyReason noneReason() {
        return BusyReason.STORAGE;
    }
}
