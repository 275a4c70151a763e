package dev.leasehold.spring.boot;

import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import dev.leasehold.client.AcquireObserver;
import dev.leasehold.client.AcquireOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Records each adapter's acquire as the observation {@code leasehold.client.acquire}, with the
 * low-cardinality values {@code api} ({@code spring-integration}, {@code shedlock}) and
 * {@code outcome} ({@code acquired}, {@code timedout}, {@code busy}, {@code unavailable},
 * {@code indeterminate}, {@code cancelled}); the key only if asked (high cardinality).
 *
 * <p>The observation stops on the thread that completes the acquire's future, so a caller that
 * was waiting for that future may run before the stop: the observation's end is a few
 * microseconds after the outcome is known, never before. The future handed back is the acquire's
 * own, so cancelling it still cancels the request.
 */
public class ObservationAcquireObserver implements AcquireObserver {

    /** The observation's name. */
    public static final String NAME = "leasehold.client.acquire";

    private final ObservationRegistry registry;
    private final boolean observeKeys;

    /**
     * @param registry where observations go
     * @param observeKeys whether to add the key as a high-cardinality value
     */
    public ObservationAcquireObserver(ObservationRegistry registry, boolean observeKeys) {
        this.registry = registry;
        this.observeKeys = observeKeys;
    }

    @Override
    public CompletableFuture<AcquireOutcome> observe(String api, String key,
            Supplier<CompletableFuture<AcquireOutcome>> acquire) {
        Observation observation = Observation.createNotStarted(NAME, registry)
                .contextualName("leasehold acquire")
                .lowCardinalityKeyValue("api", api);
        if (observeKeys) {
            observation.highCardinalityKeyValue("key", key);
        }
        observation.start();
        CompletableFuture<AcquireOutcome> f;
        try {
            f = acquire.get();
        } catch (RuntimeException e) {
            observation.lowCardinalityKeyValue("outcome", "rejected").error(e).stop();
            throw e;
        }
        f.whenComplete((o, e) -> {
            String outcome = o != null ? o.getClass().getSimpleName().toLowerCase(Locale.ROOT)
                    : f.isCancelled() ? "cancelled" : "failed";
            observation.lowCardinalityKeyValue("outcome", outcome);
            if (e != null && !f.isCancelled()) {
                observation.error(e);
            }
            observation.stop();
        });
        return f;
    }
}
