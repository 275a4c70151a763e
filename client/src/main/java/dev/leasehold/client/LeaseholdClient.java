package dev.leasehold.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.client.internal.AcquireCall;
import dev.leasehold.client.internal.Blocking;
import dev.leasehold.client.internal.Engine;
import dev.leasehold.protocol.Wire;

/**
 * The official Leasehold client: JDK only, thread-safe, one instance per application.
 *
 * <pre>{@code
 * try (LeaseholdClient client = LeaseholdClient.create("locks.internal:7420")) {
 *     if (client.acquire("orders/42", 10, 30) instanceof AcquireOutcome.Acquired a) {
 *         try (Ticket ticket = a.ticket()) {
 *             store.write(order, ticket.token());   // the resource refuses stale tokens
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p><b>Acquire semantics</b> (PROTOCOL.md section 9). Each call gets a new owner (correlation
 * id) and one monotonic deadline {@code D}: {@code start + wait}, or, for wait 0,
 * {@code start + transportDeadline} (the wire wait stays 0: one immediate attempt). While the
 * request is definitely not sent it may move to another session, keeping its owner and {@code D};
 * once a write of any of its bytes was attempted it is never sent again. Just before the write
 * the wire wait is recomputed as {@code ceil((D - now) / 1 s)}, capped at 255, so a late
 * connection never starts a fresh long wait; if {@code D} has passed the request is not sent and
 * the outcome is {@link AcquireOutcome.Unavailable}. A sent request waits for its answer until
 * {@code D + responseGrace}: a {@code T} or {@code B} is definitive whenever it comes; an
 * {@code A} is delivered only if {@code now < min(D, validUntil)} at delivery, otherwise that
 * exact token is released and the outcome is {@link AcquireOutcome.Indeterminate}. No answer by
 * {@code D + responseGrace}, or a broken session, gives Indeterminate (the session is closed so
 * the server drops the waiter; other unanswered acquires on it become Indeterminate too).
 *
 * <p><b>Design.</b> Up to {@code poolSize} sessions (TCP connections), opened on demand; each has
 * a writer thread that drains its queue (pipelining many requests per write) and a reader thread
 * that correlates answers: Acquire by owner, Release/Extend by token in request order, Ping by
 * nonce. One timer thread runs every deadline. Results reach callers through a small pool of
 * delivery threads, never on an I/O thread, so a slow callback cannot stall the client. All
 * threads are daemons named after {@link ClientOptions#threadNamePrefix()}; {@link #close()}
 * ends them.
 *
 * <p><b>Interrupts.</b> Interrupting a thread blocked in this client ends its <i>wait</i>, never
 * silently, and the thread's interrupt status stays set. {@link #acquire} then concludes the
 * call and returns what is true at that moment: {@link AcquireOutcome.Unavailable} if nothing was
 * sent, else {@link AcquireOutcome.Indeterminate} (a grant that still arrives is released); on a
 * revision 1.4 session the queued request is also withdrawn ({@code W}, PROTOCOL.md 9.14).
 * Release, extend and ping cannot be concluded that way (they retry on their own, and are safe
 * to): the blocking {@link #release}, {@link #extend}, {@link #ping}, {@link Ticket#release()}
 * and {@link Ticket#extend(int)} throw {@link IllegalStateException} and the request goes on in
 * the background. The asynchronous variants are not affected by interrupts.
 */
public final class LeaseholdClient implements AutoCloseable {

    /**
     * Longest key this client sends, in UTF-8 bytes: the server's default {@code max-key-bytes}
     * (PROTOCOL.md 2). A server configured lower answers a longer key with {@code X 4}.
     */
    public static final int MAX_KEY_BYTES = Wire.DEFAULT_MAX_KEY_BYTES;
    /** Longest lease of a grant or an Extend, in seconds (PROTOCOL.md 3). */
    public static final int MAX_LEASE_SECONDS = Wire.MAX_SECONDS;
    /** Longest wait of one Acquire in a key's queue, in seconds (PROTOCOL.md 3). */
    public static final int MAX_WAIT_SECONDS = Wire.MAX_SECONDS;

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    /** A blocking ping waits this much past the transport deadline for the timer to fail it first. */
    private static final long PING_SLACK = 100_000_000L;

    private final ClientOptions options;
    private final Engine engine;
    private final KeepAliveTimer keepAlive;

    private LeaseholdClient(ClientOptions options, List<InetSocketAddress> servers) {
        if (options == null) {
            throw new IllegalArgumentException("options is null");
        }
        if (servers == null || servers.isEmpty() || servers.stream().anyMatch(java.util.Objects::isNull)) {
            throw new IllegalArgumentException("at least one server address is needed, and none may be null");
        }
        this.options = options;
        String name = options.threadNamePrefix() != null ? options.threadNamePrefix()
                : "leasehold-client-" + INSTANCES.incrementAndGet();
        this.engine = new Engine(options.config(servers, name));
        this.keepAlive = new KeepAliveTimer(name + "-keepalive", engine.ticker(), engine.config().scheduler());
    }

    /**
     * A client for one or more servers with the given options. No connection is opened until the
     * first request; unresolved addresses are resolved at each connection attempt.
     */
    public static LeaseholdClient create(ClientOptions options, List<InetSocketAddress> servers) {
        return new LeaseholdClient(options, servers);
    }

    /** A client with default options for servers given as {@code host:port} (port defaults to 7420). */
    public static LeaseholdClient create(String... servers) {
        return create(ClientOptions.defaults(), servers);
    }

    /** A client with these options for servers given as {@code host:port} (port defaults to 7420). */
    public static LeaseholdClient create(ClientOptions options, String... servers) {
        if (servers == null || servers.length == 0) {
            throw new IllegalArgumentException("at least one server address is needed");
        }
        return create(options, java.util.Arrays.stream(servers).map(Addresses::parse).toList());
    }

    /**
     * Checks {@code key} as every call of this client does before sending it: 1 to
     * {@link #MAX_KEY_BYTES} bytes of strict UTF-8 (no unpaired surrogate) without a newline.
     * For adapters that build keys (a prefix plus a name) and want to refuse a bad one early.
     *
     * @return the key's length in UTF-8 bytes
     * @throws IllegalArgumentException saying what is wrong with the key, and the rule
     */
    public static int checkKey(String key) {
        try {
            return Arguments.key(key).length;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (a key is 1 to " + MAX_KEY_BYTES
                    + " bytes of UTF-8 without a newline)", e);
        }
    }

    /**
     * A server address given as {@code host:port}, {@code host} (port 7420), {@code [v6]:port} or
     * {@code [v6]}, as {@link #create(String...)} reads it; the host is not resolved.
     *
     * @throws IllegalArgumentException saying what is wrong and how to write it
     */
    public static InetSocketAddress serverAddress(String hostPort) {
        return Addresses.parse(hostPort);
    }

    /** The options this client was made with. */
    public ClientOptions options() {
        return options;
    }

    /**
     * Acquires the lock on {@code key}, blocking until the outcome, and never past the call's
     * deadline {@code D} plus the response grace.
     *
     * @param key 1 to 512 UTF-8 bytes, no newline
     * @param waitSeconds how long the request may wait in the key's queue, 0 to 255; 0 is one
     *        immediate attempt
     * @param leaseSeconds lease of the grant, 1 to 255
     * @return the outcome; an interrupted wait returns Indeterminate or Unavailable (with the
     *         thread's interrupt status set)
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public AcquireOutcome acquire(String key, int waitSeconds, int leaseSeconds) {
        return acquire(key, HoldMode.EXCLUSIVE, waitSeconds, leaseSeconds);
    }

    /**
     * Takes a <b>shared grant</b> on {@code key} (PROTOCOL.md section 13), blocking as
     * {@link #acquire} does, under the same rules (one deadline, Indeterminate, the ticket gate):
     * a read lock when {@code limit} is 0 ({@link #acquire} is its write lock), else one of
     * {@code limit} semaphore permits. The {@link Ticket} is a ticket like any other: its own
     * fencing token and lease, release, extend, check and keep-alive.
     *
     * @param limit 0 (read lock) or the semaphore's permits, up to the server's
     *        {@code max-shared-holders-per-key}; every user of the key must pass the same
     * @return as {@link #acquire}, plus {@link AcquireOutcome.LimitMismatch} (definitive) when the
     *         key's shared holds use another limit
     * @throws IllegalArgumentException for a bad argument (a limit outside 0..65535), before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public AcquireOutcome acquireShared(String key, int limit, int waitSeconds, int leaseSeconds) {
        return acquire(key, Arguments.sharedMode(limit), waitSeconds, leaseSeconds);
    }

    /**
     * Like {@link #acquireShared}, without blocking, as {@link #acquireAsync} is to {@link #acquire}.
     *
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public CompletableFuture<AcquireOutcome> acquireSharedAsync(String key, int limit, int waitSeconds, int leaseSeconds) {
        return acquireAsync(key, Arguments.sharedMode(limit), waitSeconds, leaseSeconds);
    }

    /**
     * A fenced read/write lock on {@code key}: read = shared grants (limit 0), write = an
     * exclusive grant, each hold leased for {@code leaseSeconds} (docs/shared.md).
     */
    public FencedReadWriteLock readWriteLock(String key, int leaseSeconds) {
        Arguments.checked(key, 0, leaseSeconds);
        return new FencedReadWriteLock(this, key, leaseSeconds);
    }

    /**
     * A fenced semaphore of {@code permits} on {@code key}, each permit leased for
     * {@code leaseSeconds} (docs/shared.md).
     *
     * @throws IllegalArgumentException for a bad key, lease or a permits count outside 1..65535
     */
    public FencedSemaphore semaphore(String key, int permits, int leaseSeconds) {
        Arguments.checked(key, 0, leaseSeconds);
        return new FencedSemaphore(this, key, permits, leaseSeconds);
    }

    /**
     * Like {@link #acquire(String, int, int)} with the wait to the millisecond (PROTOCOL.md 9.13):
     * on a session to a revision 1.4 server it is sent exactly (as an {@code M}; finer parts than a
     * millisecond round up), on a 1.3 server it is rounded up to whole seconds. A wait longer than
     * the server's {@code max-wait} (255 s on a 1.3 server) is not sent: Unavailable, naming it.
     *
     * @param wait 0 (one immediate attempt) to 3600 s
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public AcquireOutcome acquire(String key, Duration wait, int leaseSeconds) {
        return acquire(key, HoldMode.EXCLUSIVE, Arguments.waitMillis(wait), leaseSeconds);
    }

    /**
     * Like {@link #acquireShared(String, int, int, int)} with the wait to the millisecond, as
     * {@link #acquire(String, Duration, int)}.
     *
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public AcquireOutcome acquireShared(String key, int limit, Duration wait, int leaseSeconds) {
        return acquire(key, Arguments.sharedMode(limit), Arguments.waitMillis(wait), leaseSeconds);
    }

    /**
     * Like {@link #acquireAsync(String, int, int)} with the wait to the millisecond, as
     * {@link #acquire(String, Duration, int)}.
     *
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public CompletableFuture<AcquireOutcome> acquireAsync(String key, Duration wait, int leaseSeconds) {
        return acquireAsync(key, HoldMode.EXCLUSIVE, Arguments.waitMillis(wait), leaseSeconds);
    }

    /**
     * Like {@link #acquireSharedAsync(String, int, int, int)} with the wait to the millisecond, as
     * {@link #acquire(String, Duration, int)}.
     *
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public CompletableFuture<AcquireOutcome> acquireSharedAsync(String key, int limit, Duration wait, int leaseSeconds) {
        return acquireAsync(key, Arguments.sharedMode(limit), Arguments.waitMillis(wait), leaseSeconds);
    }

    private AcquireOutcome acquire(String key, HoldMode mode, int waitSeconds, int leaseSeconds) {
        return acquire(key, mode, Arguments.waitSeconds(waitSeconds) * 1000L, leaseSeconds);
    }

    private AcquireOutcome acquire(String key, HoldMode mode, long waitMillis, int leaseSeconds) {
        byte[] bytes = Arguments.checked(key, 0, leaseSeconds);
        return Acquires.blocking(engine, options, engine.acquireMillis(bytes, waitMillis, leaseSeconds, mode,
                tickets(key, bytes, mode), true)); // this thread waits anyway: it may write the request itself
    }

    /**
     * Whether an acquire started now keeps its wait to the millisecond: true while the client
     * expects revision 1.4 sessions (PROTOCOL.md 9.13: the last session that came up answered the
     * Hello, or none is known yet), false with {@code protocol-revision} 1.3 or after a server
     * answered with 1.3, whose waits are whole seconds, rounded up. For adapters that treat a
     * timed wait differently on 1.3 servers (docs/spring.md).
     */
    public boolean millisecondWaits() {
        return engine.millisecondWaits();
    }

    /**
     * Like {@link #acquire(String, Duration, int)}, the grant carrying {@code value} (PROTOCOL.md
     * 9.16.1): observers see it beside the token, {@link Ticket#proclaim(byte[])} replaces it, it ends
     * with the grant. A session that cannot carry it (a 1.3 server, or a value over the server's
     * {@code max-value-bytes}, 256 by default) does not send it: Unavailable, naming why.
     *
     * @param value opaque bytes, 0 to 1024 (empty: none)
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public AcquireOutcome acquire(String key, Duration wait, int leaseSeconds, byte[] value) {
        byte[] bytes = Arguments.checked(key, 0, leaseSeconds);
        return Acquires.blocking(engine, options, engine.acquireMillis(bytes, Arguments.waitMillis(wait), leaseSeconds,
                HoldMode.EXCLUSIVE, Arguments.value(value), tickets(key, bytes, HoldMode.EXCLUSIVE), true));
    }

    /** {@link #acquire(String, Duration, int, byte[])} without blocking, as {@link #acquireAsync(String, Duration, int)}. */
    public CompletableFuture<AcquireOutcome> acquireAsync(String key, Duration wait, int leaseSeconds, byte[] value) {
        byte[] bytes = Arguments.checked(key, 0, leaseSeconds);
        return Acquires.async(engine, engine.acquireMillis(bytes, Arguments.waitMillis(wait), leaseSeconds,
                HoldMode.EXCLUSIVE, Arguments.value(value), tickets(key, bytes, HoldMode.EXCLUSIVE), false));
    }

    /**
     * Observes {@code key} until the observation is closed (PROTOCOL.md 9.15, {@link Observation}):
     * {@code listener} hears the key's state now, then every change, and {@code unknown} whenever
     * the state cannot be known. An event is not a grant: only a {@link Ticket} entitles.
     *
     * @throws IllegalArgumentException for a bad key or a null listener
     * @throws IllegalStateException if the client is closed, or its {@code protocol-revision} is
     *         1.3 (observing needs 1.4)
     */
    public Observation observe(String key, ObservationListener listener) {
        return new Observation(engine.observe(key, Arguments.key(key),
                Observation.adapter(key, Arguments.notNull(listener, "listener"))));
    }

    /**
     * Like {@link #acquire}, without blocking. The future completes on a client delivery thread
     * (never an I/O thread). Cancelling it ends the call: not yet sent gives no request at all;
     * a grant that still arrives is released.
     *
     * @throws IllegalArgumentException for a bad argument, before anything is sent
     * @throws IllegalStateException if the client is closed
     */
    public CompletableFuture<AcquireOutcome> acquireAsync(String key, int waitSeconds, int leaseSeconds) {
        return acquireAsync(key, HoldMode.EXCLUSIVE, waitSeconds, leaseSeconds);
    }

    private CompletableFuture<AcquireOutcome> acquireAsync(String key, HoldMode mode, int waitSeconds, int leaseSeconds) {
        return acquireAsync(key, mode, Arguments.waitSeconds(waitSeconds) * 1000L, leaseSeconds);
    }

    private CompletableFuture<AcquireOutcome> acquireAsync(String key, HoldMode mode, long waitMillis, int leaseSeconds) {
        byte[] bytes = Arguments.checked(key, 0, leaseSeconds);
        return Acquires.async(engine, engine.acquireMillis(bytes, waitMillis, leaseSeconds, mode, tickets(key, bytes, mode), false));
    }

    /**
     * Releases {@code token} of {@code key} for a caller that holds no {@link Ticket}, e.g. a
     * token handed over by another process (the command line's {@code release}). Like
     * {@link Ticket#release()} it names the exact token, so it is retried on any session after a
     * failure; here for at most {@code retryFor}, because only the holder knows when the lease
     * ends.
     *
     * @return RELEASED, NOT_HELD, or EXPIRED when no answer came within {@code retryFor} (the
     *         grant, if any, then ends with its lease)
     * @throws IllegalArgumentException for a bad key or a {@code retryFor} that is not positive
     * @throws IllegalStateException if the client is closed
     */
    public ReleaseOutcome release(String key, long token, Duration retryFor) {
        byte[] bytes = Arguments.key(key);
        long giveUpAt = engine.ticker().nanoTime() + Arguments.positive(retryFor);
        return await(engine.release(bytes, token, giveUpAt).result(), giveUpAt, () -> ReleaseOutcome.EXPIRED,
                "the release of token " + token);
    }

    /**
     * Extends {@code token} of {@code key} by {@code leaseSeconds} for a caller that holds no
     * {@link Ticket} (the command line's {@code extend}), retried on any session for at most
     * {@code retryFor}.
     *
     * @return Extended with the local validity (PROTOCOL.md 9.6 with queued_ms = 0), NotHeld, or
     *         Expired when no answer came within {@code retryFor}
     * @throws IllegalArgumentException for a bad key, lease or {@code retryFor}
     * @throws IllegalStateException if the client is closed
     */
    public ExtendOutcome extend(String key, long token, int leaseSeconds, Duration retryFor) {
        byte[] bytes = Arguments.key(key);
        Arguments.leaseSeconds(leaseSeconds);
        long giveUpAt = engine.ticker().nanoTime() + Arguments.positive(retryFor);
        return await(engine.extend(bytes, token, leaseSeconds, giveUpAt).result(), giveUpAt,
                ExtendOutcome.Expired::new, "the extend of token " + token);
    }

    /**
     * Asks the server whether {@code token} is the active grant of {@code key} (PROTOCOL.md
     * section 11), for a guarded resource that cannot remember the highest token it has seen
     * (Chubby's {@code CheckSequencer}). The answer changes nothing on the server. In a cluster
     * only a leader that confirmed its leadership after the request arrived answers
     * {@code C}, so {@link CheckOutcome.Current} never comes from a deposed leader.
     *
     * <p>Deadline rules as for {@link #release(String, long, Duration)}: the check names an exact
     * token, so it is retried on any session (and on the leader a follower names) until
     * {@code retryFor} has passed; then the outcome is {@link CheckOutcome.Indeterminate}.
     *
     * @return Current, NotCurrent, or Indeterminate when no answer came within {@code retryFor}
     * @throws IllegalArgumentException for a bad key or a {@code retryFor} that is not positive
     * @throws IllegalStateException if the client is closed
     */
    public CheckOutcome check(String key, long token, Duration retryFor) {
        byte[] bytes = Arguments.key(key);
        long giveUpAt = engine.ticker().nanoTime() + Arguments.positive(retryFor);
        return await(engine.check(bytes, token, giveUpAt).result(), giveUpAt,
                () -> new CheckOutcome.Indeterminate("no answer within " + retryFor), "the check of token " + token);
    }

    /** {@link #check(String, long, Duration)} retried for the transport deadline (5 s by default). */
    public CheckOutcome check(String key, long token) {
        return check(key, token, options.transportDeadline());
    }

    /** {@link #check(String, long, Duration)} without blocking; completes off the client's I/O threads. */
    public CompletableFuture<CheckOutcome> checkAsync(String key, long token, Duration retryFor) {
        byte[] bytes = Arguments.key(key);
        long giveUpAt = engine.ticker().nanoTime() + Arguments.positive(retryFor);
        return engine.check(bytes, token, giveUpAt).result().thenApplyAsync(r -> r, engine.deliveryExecutor());
    }

    /**
     * Keeps {@code ticket} alive until the returned handle or the ticket is closed: an Extend of
     * {@code leaseSeconds} every {@code leaseSeconds / 3} on this client's keep-alive thread
     * (never an I/O thread). {@code listener} hears {@link LeaseListener#leaseLost} once if the
     * lease is lost (an Extend answered NotHeld, the validity ended without a successful Extend,
     * or this client closed) and, optionally, {@link LeaseListener#leaseAtRisk} when an Extend is
     * late. A lost ticket stays lost: acquire again for a new token.
     *
     * <pre>{@code
     * try (Ticket ticket = acquired.ticket();
     *      KeepAlive keepAlive = client.keepAlive(ticket, 30, (t, reason, detail) -> stopWork())) {
     *     while (!keepAlive.isLost() && ticket.isValid()) { step(ticket.token()); }
     * }
     * }</pre>
     *
     * @param ticket a ticket of this client
     * @param leaseSeconds the lease each Extend asks for, 1 to 255 (usually the acquire's lease)
     * @param listener hears loss and risk; called on the keep-alive thread, keep it short
     * @throws IllegalArgumentException for a bad lease or a null argument
     * @throws IllegalStateException if the client is closed
     */
    public KeepAlive keepAlive(Ticket ticket, int leaseSeconds, LeaseListener listener) {
        return keepAlive.keep(ticket, leaseSeconds, listener);
    }

    /**
     * Round trip of a Ping on a pooled session (from just before the write to the decoded Pong),
     * for health checks. Opens a session if none is open.
     *
     * @throws IOException if no Pong came within the transport deadline or the session broke
     * @throws IllegalStateException if the calling thread was interrupted (see "Interrupts" above)
     */
    public Duration ping() throws IOException {
        try {
            // Waits on the answer itself, as acquire and release do: a blocked caller runs no user
            // code on the I/O thread, so pingAsync's hop to a delivery thread would only add a wake-up.
            CompletableFuture<Duration> rtt = engine.ping().result().thenApply(Duration::ofNanos);
            return Blocking.await(rtt, options.transportDeadline().toNanos() + PING_SLACK, () -> {
                throw new CompletionException(new IOException("no Pong within " + options.transportDeadline()));
            }, Blocking.interrupted("a Pong"));
        } catch (CompletionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        }
    }

    /** Like {@link #ping()}, without blocking; fails with an IOException. */
    public CompletableFuture<Duration> pingAsync() {
        return engine.ping().result().thenApplyAsync(Duration::ofNanos, engine.deliveryExecutor());
    }

    /**
     * Closes every session and ends every thread of this client. Unanswered acquires end as
     * Indeterminate, unsent ones as Unavailable; Releases and Extends still in progress fail with
     * IllegalStateException (their grants end with their leases). Idempotent.
     */
    @Override
    public void close() {
        keepAlive.close();
        engine.close();
    }

    /** A leader election on {@code key} as {@code identity}, the term a fencing token (docs/election.md; {@link Election}). */
    public Election election(String key, String identity, ElectionOptions options) {
        return new Election(engine, keepAlive, key, identity, options);
    }

    /** The mechanics, for tests in this module. */
    Engine engine() {
        return engine;
    }

    /** Starts an acquire call without waiting or gating it (tests in this module). */
    AcquireCall startAcquire(String key, int waitSeconds, int leaseSeconds) {
        byte[] bytes = Arguments.checked(key, waitSeconds, leaseSeconds);
        return engine.acquire(bytes, waitSeconds, leaseSeconds, tickets(key, bytes, HoldMode.EXCLUSIVE));
    }

    private <R> R await(CompletableFuture<R> f, long giveUpAt, java.util.function.Supplier<R> gaveUp, String what) {
        return Blocking.await(f, giveUpAt - engine.ticker().nanoTime() + options.responseGrace().toNanos(), gaveUp,
                Blocking.interrupted(what));
    }

    /** How a grant of this call becomes the caller's ticket. */
    private AcquireCall.Tickets tickets(String key, byte[] bytes, HoldMode mode) {
        return g -> new AcquireOutcome.Acquired(new Ticket(engine, key, bytes, g.token(), g.validUntil(),
                g.leaseEndUpperBound(), mode.isShared()));
    }
}
