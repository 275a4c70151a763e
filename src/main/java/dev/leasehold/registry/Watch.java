package dev.leasehold.registry;

/**
 * One watch on one key (PROTOCOL.md section 16) as the registry sees it: told each event of the
 * key, in the order the decisions were made. The server's subclass delivers them to its session.
 *
 * <p>{@link #decided} is called with the key's lane lock held, from whichever thread made the
 * decision (an event loop, the registry timer, a Raft apply): it must be cheap and must never
 * block (no I/O, no waiting). {@link #afterDecided} follows once the lock is let go and the
 * lane's waiter answers have been handed on, so a delivery scheduled there comes after the
 * answer of the same decision.
 */
public abstract class Watch {

    /** The key this watch is linked to, set by the registry; null before and after. Lane lock. */
    KeyState key;
    Watch prevOnKey;
    Watch nextOnKey;
    /** In its lane's list of watches to call {@link #afterDecided} on. Lane lock. */
    boolean notified;

    /** Lane lock held: the key's next event ({@code KeyEvent.cause()} 0 for the first). Never blocks. */
    protected abstract void decided(KeyEvent event);

    /** No lock held, after one or more {@link #decided} calls of one lane operation. */
    protected abstract void afterDecided();
}
