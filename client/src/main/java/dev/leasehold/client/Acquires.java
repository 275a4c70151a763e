package dev.leasehold.client;

import java.util.concurrent.CompletableFuture;

import dev.leasehold.client.internal.AcquireCall;
import dev.leasehold.client.internal.Blocking;
import dev.leasehold.client.internal.Engine;

/**
 * How the public acquire methods wait for a started {@link AcquireCall}: blocking (with the
 * interrupt policy of {@link LeaseholdClient}) or as a future whose cancellation ends the call.
 * Either way the outcome passes the ticket delivery gate (PROTOCOL.md 9.7), and a caller that
 * stops waiting concludes the call, which withdraws it on a revision 1.4 session (9.14).
 */
final class Acquires {

    private Acquires() {
    }

    /** Waits at most {@code D + responseGrace}; an interrupt concludes the call at once (Unavailable or Indeterminate). */
    static AcquireOutcome blocking(Engine engine, ClientOptions options, AcquireCall call) {
        long bound = call.deadline() + options.responseGrace().toNanos();
        AcquireOutcome r = Blocking.await(call.result(), bound - engine.ticker().nanoTime(), () -> {
            call.expireNow(); // the timer runs late: decide now, as it would have
            return call.result().join();
        }, () -> {
            call.conclude("the calling thread was interrupted");
            return call.result().join();
        });
        return call.deliver(r);
    }

    /** The call's outcome on a delivery thread; cancelling the future concludes the call. */
    static CompletableFuture<AcquireOutcome> async(Engine engine, AcquireCall call) {
        CompletableFuture<AcquireOutcome> future = new CompletableFuture<>();
        call.result().whenCompleteAsync((r, e) -> {
            AcquireOutcome o = e != null ? new AcquireOutcome.Indeterminate(String.valueOf(e)) : call.deliver(r);
            if (!future.complete(o) && o instanceof AcquireOutcome.Acquired a) {
                a.ticket().releaseAsync(); // nobody will see this grant
            }
        }, engine.deliveryExecutor());
        future.whenComplete((o, e) -> {
            if (future.isCancelled()) {
                call.conclude("the caller cancelled the acquire");
            }
        });
        return future;
    }
}
