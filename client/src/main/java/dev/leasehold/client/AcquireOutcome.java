package dev.leasehold.client;

/**
 * How an {@link LeaseholdClient#acquire acquire} call ended (PROTOCOL.md 9.1). These are
 * results, not exceptions: every call ends in exactly one of them.
 *
 * <ul>
 * <li>{@link Acquired} — you hold the lock until {@link Ticket#validUntilNanos()}; pass
 *     {@link Ticket#token()} to the guarded resource.</li>
 * <li>{@link TimedOut} and {@link Busy} — definitive: the server did not and will not grant this
 *     call.</li>
 * <li>{@link Unavailable} — definitive: the request was never sent, no grant exists.</li>
 * <li>{@link LimitMismatch} — definitive, shared acquires only: the key's shared holds use
 *     another limit; no grant exists, and retrying will not help.</li>
 * <li>{@link Cancelled} — definitive (revision 1.4): the caller withdrew the acquire and its
 *     answer proved that it holds nothing (PROTOCOL.md 9.14).</li>
 * <li>{@link Indeterminate} — the request may have reached the server and no definitive answer
 *     can be delivered. Do <b>not</b> enter the critical section. A grant you did not observe
 *     is released by the client when it can, and ends with its lease at the latest, so
 *     retrying later is safe.</li>
 * </ul>
 */
public sealed interface AcquireOutcome permits AcquireOutcome.Acquired, AcquireOutcome.TimedOut,
        AcquireOutcome.Busy, AcquireOutcome.Indeterminate, AcquireOutcome.Unavailable, AcquireOutcome.Forbidden,
        AcquireOutcome.LimitMismatch, AcquireOutcome.Cancelled {

    /**
     * True for {@link TimedOut}, {@link Busy}, {@link Unavailable}, {@link Forbidden},
     * {@link LimitMismatch} and {@link Cancelled}: no grant exists.
     */
    default boolean isDefinitiveRefusal() {
        return this instanceof TimedOut || this instanceof Busy || this instanceof Unavailable
                || this instanceof Forbidden || this instanceof LimitMismatch || this instanceof Cancelled;
    }

    /**
     * The lock was granted and delivered in time.
     *
     * @param ticket the grant: key, fencing token, local validity, release and extend
     */
    record Acquired(Ticket ticket) implements AcquireOutcome {
    }

    /** The wait ran out (or, for wait 0, the key was taken). No grant exists. */
    record TimedOut() implements AcquireOutcome {
    }

    /** A server limit was reached, or it is draining for shutdown. No grant exists. */
    record Busy() implements AcquireOutcome {
    }

    /**
     * The request may have reached the server, and no definitive answer can be delivered: its
     * session broke, no answer came by the deadline plus the response grace, or a grant arrived
     * too late for the delivery gate (then that exact token is being released). The caller must
     * not act as holder.
     *
     * @param reason what happened, for logs
     */
    record Indeterminate(String reason) implements AcquireOutcome {
    }

    /**
     * The request was definitely never sent: no session could take it before the deadline (the
     * servers were unreachable), or the client was closed. No grant exists.
     *
     * @param reason what happened, for logs
     */
    record Unavailable(String reason) implements AcquireOutcome {
    }

    /**
     * The server's ACL does not let this client use the key ({@code X 7} naming it, PROTOCOL.md
     * section 4): the request was refused before anything was executed. No grant exists, and
     * retrying will not help until the server's {@code leasehold.acl} or the client's certificate
     * changes. The session closed; other requests in flight on it follow section 9 (an Acquire
     * on another key is Indeterminate).
     *
     * @param reason the server's message, for logs
     */
    record Forbidden(String reason) implements AcquireOutcome {
    }

    /**
     * A shared acquire ({@link LeaseholdClient#acquireShared}) was answered {@code L}
     * (PROTOCOL.md section 13.2): the key's shared holds use {@code keyLimit}, this call asked
     * for {@code requested}. Neither granted nor queued; a configuration error to fix (two
     * deployments disagree on a semaphore's size, or one uses the key as a read lock).
     *
     * @param requested the limit this call asked for (0 = read lock)
     * @param keyLimit the limit the key's shared holds use
     */
    record LimitMismatch(int requested, int keyLimit) implements AcquireOutcome {
    }

    /**
     * The caller withdrew the acquire (revision 1.4, PROTOCOL.md 9.14) and the acquire's own
     * answer proved that it holds nothing: a {@code T} (the server took the waiter out of the
     * queue), a grant that came first and whose exact token the client released, or an
     * {@code X 8} (nothing was executed). Definitive. Reported only by calls that wait for that
     * proof (a stopped campaign or adapter); an interrupted or cancelled acquire concludes at once
     * instead, with {@link Unavailable} or {@link Indeterminate}.
     *
     * @param reason what proved it, for logs
     */
    record Cancelled(String reason) implements AcquireOutcome {
    }
}
