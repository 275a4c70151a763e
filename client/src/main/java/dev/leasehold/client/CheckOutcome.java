package dev.leasehold.client;

/**
 * How a check of a fencing token ended (PROTOCOL.md section 11): {@link LeaseholdClient#check}
 * and {@link Ticket#check()}. Only {@link Current} says "this token still holds the key", and
 * only at the instant the serving leader answered: a guarded resource that acts on it later
 * can still be overtaken by an expiry, exactly as with a ticket's validity. Treat
 * {@link NotCurrent} and {@link Indeterminate} alike: refuse the token.
 */
public sealed interface CheckOutcome permits CheckOutcome.Current, CheckOutcome.NotCurrent,
        CheckOutcome.Indeterminate {

    /** True only for {@link Current}. */
    default boolean isCurrent() {
        return this instanceof Current;
    }

    /** The server answered {@code C}: the token was the key's active grant when it answered. */
    record Current() implements CheckOutcome {
    }

    /**
     * The server answered {@code N}: the token is not the key's active grant (released, expired,
     * never issued, or issued for another key). Definitive: a token that stopped being current
     * never becomes current again.
     */
    record NotCurrent() implements CheckOutcome {
    }

    /**
     * No answer could be obtained before the call's deadline (no reachable leader, sessions
     * breaking): the client cannot say. A check changes nothing on the server, so nothing needs
     * cleaning up; treat the token as not current.
     *
     * @param reason for logs
     */
    record Indeterminate(String reason) implements CheckOutcome {
    }
}
