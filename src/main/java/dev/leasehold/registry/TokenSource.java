package dev.leasehold.registry;

/**
 * Issues fencing tokens. Every token returned must be strictly greater than every token issued
 * before by this data directory, across restarts and crashes, so an implementation persists a
 * high-water mark <em>before</em> handing out tokens below it.
 *
 * <p>Called under a registry lane lock: it must not block. When no durable token is available
 * right now (the high-water mark could not be persisted in time), it returns {@link #NONE} and
 * the Acquire is answered Busy.
 */
@FunctionalInterface
public interface TokenSource {

    long NONE = 0;

    /** The next token, or {@link #NONE}. Never blocks. */
    long next();
}
