package dev.leasehold.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.leasehold.client.internal.Blocking;
import dev.leasehold.client.internal.Engine;
import dev.leasehold.client.internal.LeaseMath;
import dev.leasehold.client.internal.Ticker;
import dev.leasehold.client.internal.TokenCall;
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
    private final Ticker ticker;

    private long validUntil;
    private long leaseEndUpperBound;
    /**
     * The release's answer as the I/O thread completes it (for a blocked caller to wait on:
     * nothing may be chained to it); non-null once a release started. Guarded by {@code this}.
     */
    private CompletableFuture<ReleaseOutcome> answer;
    /**
     * What {@link #releaseAsync} hands to users: {@link #answer} moved to a delivery thread.
     * Made only when asked for, so a blocking {@link #release()} costs no delivery-thread
     * hand-off (the reader would otherwise wake a delivery thread for every release, nobody
     * listening; bench/NOTES.md, "The blocking release's delivery hop"). Guarded by {@code this}.
     */
    private CompletableFuture<ReleaseOutcome> asyncRelease;

    /** A shared grant's (read lock, permit): it has no value (PROTOCOL.md 17.2). */
    private final boolean shared;
    /**
     * The last proclaim's outcome as its call completes it (on an I/O thread): the next proclaim
     * starts after it, so one {@code V} is in flight per ticket, in call order (9.16.3). Guarded
     * by {@code this}.
     */
    private CompletableFuture<ProclaimOutcome> lastProclaim = CompletableFuture.completedFuture(null);

    Ticket(Engine engine, String key, byte[] keyBytes, long token, long validUntil, long leaseEndUpperBound) {
        this(engine, key, keyBytes, token, validUntil, leaseEndUpperBound, false);
    }

    Ticket(Engine engine, String key, byte[] keyBytes, long token, long validUntil, long leaseEndUpperBound,
            boolean shared) {
        this.shared = shared;
        this.engine = engine;
        this.key = key;
        this.keyBytes = keyBytes;
        this.token = token;
        this.validUntil = validUntil;
        this.leaseEndUpperBound = leaseEndUpperBound;
        this.graceNanos = engine.config().responseGraceNanos();
        this.ticker = engine.ticker();
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
        long left = validUntilNanos() - ticker.nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /** True while the caller may act as holder: before validUntil and before any release. */
    public synchronized boolean isValid() {
        return answer == null && ticker.nanoTime() - validUntil < 0;
    }

    /** True once a release of this ticket started ({@link #release()}, {@link #releaseAsync()}, {@link #close()}). */
    public synchronized boolean isReleased() {
        return answer != null;
    }

    /**
     * Releases this exact token, blocking until the answer (at the latest until the lease would
     * have ended anyway). Idempotent: later calls return the same outcome. The ticket stops being
     * valid as soon as the release starts.
     *
     * @throws IllegalStateException if the client was closed before the release could finish
     */
    public ReleaseOutcome release() {
        // Waits on the answer itself, not on releaseAsync's hop to a delivery thread: a blocked
        // caller runs no code on the I/O thread, so that hop would only add a thread wake-up. And
        // it offers the request outside this ticket's monitor, so it may write it itself when its
        // session is idle (no writer-thread hop), holding no lock an I/O thread could need.
        TokenCall<ReleaseOutcome> call;
        CompletableFuture<ReleaseOutcome> f;
        synchronized (this) {
            call = beginRelease();
            f = answer;
        }
        if (call != null) {
            engine.send(call, true);
        }
        return await(f, () -> ReleaseOutcome.EXPIRED, "release");
    }

    /**
     * {@link #release()}, but an interrupt does not end the wait: the thread waits for the outcome
     * all the same (still at the latest until the lease would have ended anyway, plus the response
     * grace) and its interrupt status is set again before this returns. For callers that must know
     * how the release ended, such as {@code Lock.unlock()} implementations: the request may be
     * written by the calling thread and the answer needs no delivery thread, so this is faster than
     * waiting on {@link #releaseAsync()}.
     *
     * @throws IllegalStateException if the client was closed before the release could finish
     */
    public ReleaseOutcome releaseUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return release();
                } catch (IllegalStateException e) {
                    if (!Thread.interrupted()) {
                        throw e; // the client closed: no interrupt to wait through
                    }
                    interrupted = true; // release() is idempotent: wait for the same answer again
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link #release()} without blocking; the future completes off the client's I/O threads. */
    public CompletableFuture<ReleaseOutcome> releaseAsync() {
        TokenCall<ReleaseOutcome> call;
        CompletableFuture<ReleaseOutcome> f;
        synchronized (this) {
            call = beginRelease();
            if (asyncRelease == null) {
                // Decided before the request is offered, so a fast answer cannot race it. An
                // answer already in needs no hop: its dependents run on the caller's thread.
                asyncRelease = answer.isDone() ? answer.copy()
                        : answer.thenApplyAsync(r -> r, engine.deliveryExecutor()); // off the I/O threads
            }
            f = asyncRelease;
        }
        if (call != null) {
            engine.send(call, false);
        }
        return f;
    }

    /**
     * Under the monitor, once per ticket: sets {@link #answer} and returns the Release call to
     * offer to a session, or null (already started, or the lease is over).
     */
    private TokenCall<ReleaseOutcome> beginRelease() {
        if (answer != null) {
            return null;
        }
        if (ticker.nanoTime() - leaseEndUpperBound >= 0) {
            answer = CompletableFuture.completedFuture(ReleaseOutcome.EXPIRED);
            return null;
        }
        TokenCall<ReleaseOutcome> call = engine.prepareRelease(keyBytes, token, leaseEndUpperBound);
        answer = call.result();
        return call;
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
        return await(extendAsync(leaseSeconds), ExtendOutcome.Expired::new, "extend");
    }

    /**
     * Blocks until the lease would have ended anyway plus the grace (9.11); see the client's
     * interrupt policy. {@code operation} names the request in the interrupt's message, which is
     * only built if it is thrown (no string per call on the hot path).
     */
    private <R> R await(CompletableFuture<R> f, java.util.function.Supplier<R> gaveUp, String operation) {
        long bound;
        synchronized (this) {
            bound = leaseEndUpperBound;
        }
        return Blocking.await(f, Math.max(0, bound - ticker.nanoTime()) + graceNanos, gaveUp, () -> {
            throw new IllegalStateException("interrupted while waiting for the " + operation + " of token " + token
                    + "; it goes on in the background");
        });
    }

    /** {@link #extend(int)} without blocking; the future completes off the client's I/O threads. */
    public CompletableFuture<ExtendOutcome> extendAsync(int leaseSeconds) {
        Arguments.leaseSeconds(leaseSeconds);
        long giveUpAt;
        synchronized (this) {
            if (answer != null) {
                return CompletableFuture.completedFuture(new ExtendOutcome.NotHeld());
            }
            giveUpAt = leaseEndUpperBound;
        }
        if (ticker.nanoTime() - giveUpAt >= 0) {
            return CompletableFuture.completedFuture(new ExtendOutcome.Expired());
        }
        var call = engine.extend(keyBytes, token, leaseSeconds, giveUpAt);
        return call.result().thenApplyAsync(r -> {
            Long uncertain = call.uncertainLeaseEnd();
            synchronized (this) {
                if (uncertain != null) {
                    leaseEndUpperBound = LeaseMath.latest(leaseEndUpperBound, uncertain);
                }
                if (r instanceof ExtendOutcome.Extended e) {
                    // Never backwards: an earlier, longer extension may still be the later end.
                    validUntil = LeaseMath.latest(validUntil, e.validUntilNanos());
                    leaseEndUpperBound = LeaseMath.latest(leaseEndUpperBound, call.confirmedLeaseEnd());
                    return new ExtendOutcome.Extended(validUntil);
                }
            }
            return r;
        }, engine.deliveryExecutor());
    }

    /**
     * Asks the server whether this ticket's token is still the key's active grant
     * ({@link LeaseholdClient#check(String, long, Duration)}), blocking until the answer. Retried
     * on any session until the lease would have ended anyway (as {@link #release()}), but never
     * longer than the client's transport deadline; then Indeterminate. After this ticket's own
     * release started, or once the lease has certainly ended, the answer is NotCurrent without a
     * request.
     *
     * @throws IllegalStateException if the client was closed before the check could finish
     */
    public CheckOutcome check() {
        long giveUpAt;
        synchronized (this) {
            if (answer != null) {
                return new CheckOutcome.NotCurrent();
            }
            giveUpAt = leaseEndUpperBound;
        }
        long now = ticker.nanoTime();
        if (now - giveUpAt >= 0) {
            return new CheckOutcome.NotCurrent(); // the server's lease has ended by now, whatever it says
        }
        long deadline = LeaseMath.earliest(giveUpAt, now + engine.config().transportDeadlineNanos());
        CompletableFuture<CheckOutcome> f = engine.check(keyBytes, token, deadline).result();
        return Blocking.await(f, Math.max(0, deadline - now) + graceNanos,
                () -> new CheckOutcome.Indeterminate("no answer before the check's deadline"),
                Blocking.interrupted("the check of token " + token));
    }

    /**
     * Sets this grant's value (PROTOCOL.md 9.16, section 17): observers see it beside the token
     * ({@link LeaseholdClient#observe}) until the grant ends or a later proclaim replaces it; it is
     * for routing and display (a leader's address beside its term), never for fencing. Blocks
     * until the outcome, at the latest until the lease would have ended anyway.
     *
     * <p>Proclaims of one ticket are sent one after another, in call order, so a retry never lets
     * an older value overwrite a newer one: the last call's value stays. Each is retried on any
     * session (also after the leader changed) until the lease would have ended, then
     * Indeterminate. A released ticket, or one whose lease has certainly ended, answers NotHeld
     * without a request.
     *
     * @param value opaque bytes, 0 to 1024 (empty clears the value)
     * @throws IllegalArgumentException for a value over 1024 bytes, before anything is sent
     * @throws IllegalStateException before anything is sent, for a shared ticket (values are for
     *         exclusive grants), when the server speaks revision 1.3 or the value is longer than
     *         its {@code max-value-bytes}; or if the client was closed
     */
    public ProclaimOutcome proclaim(byte[] value) {
        return await(proclaimAsync(value),
                () -> new ProclaimOutcome.Indeterminate("no answer before the lease would have ended"),
                "proclaim");
    }

    /** {@link #proclaim(byte[])} with {@code value} as UTF-8 text. */
    public ProclaimOutcome proclaim(String value) {
        return proclaim(Arguments.notNull(value, "value").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * {@link #proclaim(byte[])} without blocking; the future completes off the client's I/O threads,
     * exceptionally with the {@link IllegalStateException} that the blocking call throws.
     */
    public CompletableFuture<ProclaimOutcome> proclaimAsync(byte[] value) {
        byte[] v = Arguments.value(value);
        if (shared) {
            throw new IllegalStateException("a shared grant has no value (PROTOCOL.md 17.2): proclaim needs an"
                    + " exclusive ticket");
        }
        if (!engine.millisecondWaits()) {
            throw new IllegalStateException("a value cannot be sent to a revision 1.3 server (PROTOCOL.md 9.16.2);"
                    + " nothing was sent");
        }
        CompletableFuture<ProclaimOutcome> mine;
        synchronized (this) {
            mine = lastProclaim.handle((r, e) -> null).thenCompose(x -> startProclaim(v));
            lastProclaim = mine;
        }
        return mine.thenApplyAsync(r -> r, engine.deliveryExecutor());
    }

    /** One proclaim's call, once the one before it ended. */
    private CompletableFuture<ProclaimOutcome> startProclaim(byte[] value) {
        long giveUpAt;
        synchronized (this) {
            if (answer != null) {
                return CompletableFuture.completedFuture(new ProclaimOutcome.NotHeld());
            }
            giveUpAt = leaseEndUpperBound;
        }
        if (ticker.nanoTime() - giveUpAt >= 0) {
            return CompletableFuture.completedFuture(new ProclaimOutcome.NotHeld()); // certainly ended
        }
        return engine.value(keyBytes, token, value, giveUpAt).result();
    }

    /** True for a shared grant's ticket (a read lock or a semaphore permit). */
    public boolean isShared() {
        return shared;
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
}
