package dev.leasehold.client;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Wraps each acquire an adapter makes (the Spring Integration registry, the ShedLock provider),
 * so that a framework can time it and tag its outcome: the Spring Boot starter records a
 * Micrometer observation {@code leasehold.client.acquire} with it. JDK only, so the client keeps
 * no dependency.
 */
@FunctionalInterface
public interface AcquireObserver {

    /** Observes nothing. */
    AcquireObserver NONE = (api, key, acquire) -> acquire.get();

    /**
     * Runs {@code acquire} (which starts the call) and returns its future, observing it.
     *
     * @param api which adapter calls, a low-cardinality name such as {@code spring-integration}
     * @param key the key, for observers that opt in to high-cardinality data
     * @param acquire starts the acquire
     * @return the acquire's future (or one that completes with the same outcome)
     */
    CompletableFuture<AcquireOutcome> observe(String api, String key,
            Supplier<CompletableFuture<AcquireOutcome>> acquire);
}
