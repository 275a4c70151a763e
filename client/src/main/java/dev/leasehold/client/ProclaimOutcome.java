package dev.leasehold.client;

/**
 * How {@link Ticket#proclaim(byte[])} ended (PROTOCOL.md 9.16): the value of an exclusive grant,
 * shown to observers next to its token ({@link LeaseholdClient#observe}). A value is for routing
 * and display (a leader's address beside its term); the token fences, never the value.
 */
public sealed interface ProclaimOutcome permits ProclaimOutcome.Proclaimed, ProclaimOutcome.NotHeld,
        ProclaimOutcome.Indeterminate {

    /** True only for {@link Proclaimed}. */
    default boolean isProclaimed() {
        return this instanceof Proclaimed;
    }

    /**
     * The server answered {@code V}: the value is the grant's from then until the grant ends or a
     * later proclaim replaces it.
     */
    record Proclaimed() implements ProclaimOutcome {
    }

    /**
     * The token is not the key's active exclusive grant (the server answered {@code N}), or the
     * ticket was released or its lease has certainly ended (then no request was sent). Definitive.
     */
    record NotHeld() implements ProclaimOutcome {
    }

    /**
     * No answer came before the lease would have ended: the value may or may not have been set.
     * It ends with the grant either way.
     *
     * @param reason for logs
     */
    record Indeterminate(String reason) implements ProclaimOutcome {
    }
}
