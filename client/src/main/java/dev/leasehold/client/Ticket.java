package dev.leasehold.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.leasehold.client.internal.Engine;
import dev.leasehold.client.internal.LeaseMath;
import dev.leasehold.client.internal.TokenResult;
import dev.leasehold.protocol.Keys;

/**
 * A granted lock: the key, its fencing token, and how long the caller may act as holder.
 *
 * <p><b>This is a lease, not a mutex.</b> The caller must stop acting as holder at
 * {@link #validUntilNanos()} (check {@link #isValid()} before each guarded step), and should pass
 * {@link #token()} to the guarded resource with every write: a holder paused (GC, swap, network)
 * between its check and its action cannot see that its lease ended and another holder took over;
 * only the resource can, by refusing tokens lower than the highest it has seen. Tokens are
 * strictly increasing per server data directory, across restarts.
 *
 * <p>{@code validUntil = sendStart + queued_ms + lease - margin} on this JVM's monotonic clock
 * ({@link System#nanoTime()}), where {@code sendStart} is the instant just before the request's
 * first byte was written and {@code margin = max(floor, drift × (queued_ms + lease))}
 * (PROTOCOL.md 9.6): the server's lease cannot have ended earlier.
 *
 * <p>{@link #close()} releases, so a ticket fits try-with-resources. {@link #release()} and
 * {@link #extend(int)} name this exact token, so the client retries them on any session after a
 * failure until the lease would have ended anyway (9.10). Thread-safe.
 */
public final class Ticket implements AutoCloseable {

    private final Engine engine;
    private final String key;
    private final byte[] keyBytes;
    private final long token;
    private final long graceNanos;

    private long validUntil;
    private long leaseEndUpperBound;
    private CompletableFuture<ReleaseOutcome> release;

    Ticket(Engine engine, String key, byte[] keyBytes, long token, long validUntil, long leaseEndUpperBound) {
        this.engine = engine;
        this.key = key;
        this.keyBytes = keyBytes;
        this.token = token;
        this.validUntil = validUntil;
        this.leaseEndUpperBound = leaseEndUpperBound;
        this.graceNanos = engine.config().responseGraceNanos();
    }

    /** The locked key. */
    public String key() {
        return key;
    }

    /** The fencing token of this grant: pass it to the guarded resource. Never 0. */
    public long token() {
        return token;
    }

    /**
     * The local validity deadline as a {@link System#nanoTime()} value: stop acting as holder at
     * this instant. Compare with {@code System.nanoTime() - validUntilNanos() < 0}.
     */
    public synchronized long validUntilNanos() {
        return validUntil;
    }

    /** Time left before {@link #validUntilNanos()}, or zero. */
    public Duration remaining() {
        long left = validUntilNanos() - System.nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /** True while the caller may act as holder: before validUntil and before any release. */
    public synchronized boolean isValid() {
        return release == null && System.nanoTime() - validUntil < 0;
    }

    /** True once a release of this ticket started ({@link #release()}, {@link #releaseAsync()}, {@link #close()}). */
    public synchronized boolean isReleased() {
        return release != null;
    }

    /**
     * Releases this exact token, blocking until the answer (at the latest until the lease would
     * have ended anyway). Idempotent: later calls return the same outcome. The ticket stops being
     * valid as soon as the release starts.
     *
     * @throws IllegalStateException if the client was closed before the release could finish
     */
    public ReleaseOutcome release() {
        CompletableFuture<ReleaseOutcome> f = releaseAsync();
        long bound;
        synchronized (this) {
            bound = leaseEndUpperBound;
        }
        try {
            return f.get(Math.max(0, bound - System.nanoTime()) + graceNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while releasing token " + token
                    + "; the release goes on in the background", e);
        } catch (TimeoutException e) {
            return ReleaseOutcome.EXPIRED;
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /** {@link #release()} without blocking; the future completes off the client's I/O threads. */
    public CompletableFuture<ReleaseOutcome> releaseAsync() {
        synchronized (this) {
            if (release != null) {
                return release;
            }
            if (System.nanoTime() - leaseEndUpperBound >= 0) {
                release = CompletableFuture.completedFuture(ReleaseOutcome.EXPIRED);
                return release;
            }
            release = engine.release(keyBytes, token, leaseEndUpperBound).result()
                    .thenApplyAsync(Ticket::toReleaseOutcome, engine.deliveryExecutor());
            return release;
        }
    }

    /**
     * Extends the lease to at least {@code leaseSeconds} from the server's receipt of the request,
     * blocking until the answer. On {@link ExtendOutcome.Extended} the ticket's validity moves to
     * {@code sendStart + lease - margin} (never backwards).
     *
     * @param leaseSeconds 1 to 255
     * @throws IllegalArgumentException if {@code leaseSeconds} is out of range
     * @throws IllegalStateException if the client was closed before the extend could finish
     */
    public ExtendOutcome extend(int leaseSeconds) {
        CompletableFuture<ExtendOutcome> f = extendAsync(leaseSeconds);
        long bound;
        synchronized (this) {
            bound = leaseEndUpperBound;
        }
        try {
            return f.get(Math.max(0, bound - System.nanoTime()) + graceNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while extending token " + token, e);
        } catch (TimeoutException e) {
            return new ExtendOutcome.Expired();
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /** {@link #extend(int)} without blocking; the future completes off the client's I/O threads. */
    public CompletableFuture<ExtendOutcome> extendAsync(int leaseSeconds) {
        Arguments.leaseSeconds(leaseSeconds);
        long giveUpAt;
        synchronized (this) {
            if (release != null) {
                return CompletableFuture.completedFuture(new ExtendOutcome.NotHeld());
            }
            giveUpAt = leaseEndUpperBound;
        }
        if (System.nanoTime() - giveUpAt >= 0) {
            return CompletableFuture.completedFuture(new ExtendOutcome.Expired());
        }
        var call = engine.extend(keyBytes, token, leaseSeconds, giveUpAt);
        return call.result().thenApplyAsync(r -> {
            Long uncertain = call.uncertainLeaseEnd();
            synchronized (this) {
                if (uncertain != null) {
                    leaseEndUpperBound = LeaseMath.latest(leaseEndUpperBound, uncertain);
                }
                if (r instanceof TokenResult.Extended e) {
                    validUntil = LeaseMath.latest(validUntil, e.validUntil());
                    leaseEndUpperBound = LeaseMath.latest(leaseEndUpperBound, e.leaseEndUpperBound());
                    return new ExtendOutcome.Extended(validUntil);
                }
            }
            return r instanceof TokenResult.NotHeld ? new ExtendOutcome.NotHeld() : new ExtendOutcome.Expired();
        }, engine.deliveryExecutor());
    }

    /** Releases (see {@link #release()}) unless already released; never throws for an outcome. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "Ticket[key=" + Keys.printable(key.getBytes(StandardCharsets.UTF_8)) + ", token=" + token
                + ", remaining=" + remaining() + "]";
    }

    private static ReleaseOutcome toReleaseOutcome(TokenResult r) {
        if (r instanceof TokenResult.Released) {
            return ReleaseOutcome.RELEASED;
        }
        return r instanceof TokenResult.NotHeld ? ReleaseOutcome.NOT_HELD : ReleaseOutcome.EXPIRED;
    }

    private static RuntimeException unwrap(ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof RuntimeException r) {
            return r;
        }
        return new IllegalStateException(c);
    }
}
