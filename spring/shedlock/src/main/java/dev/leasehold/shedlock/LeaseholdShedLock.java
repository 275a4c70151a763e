package dev.leasehold.shedlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.OptionalLong;

import dev.leasehold.client.CheckOutcome;
import dev.leasehold.client.Ticket;

/**
 * The fencing token inside a task run under {@link LeaseholdLockProvider}: ShedLock calls
 * {@code lock}, the task and {@code unlock} on one thread, so the provider keeps the tokens of
 * the locks the thread holds on a thread-local stack.
 *
 * <pre>{@code
 * @Scheduled(fixedRate = 60_000)
 * @SchedulerLock(name = "nightly-report", lockAtMostFor = "PT10M")
 * void report() {
 *     long token = LeaseholdShedLock.currentToken().orElseThrow();
 *     reports.write(build(), token);   // the store refuses tokens lower than the last one it saw
 * }
 * }</pre>
 */
public final class LeaseholdShedLock {

    private static final ThreadLocal<Deque<Ticket>> TICKETS = ThreadLocal.withInitial(ArrayDeque::new);

    private LeaseholdShedLock() {
    }

    /**
     * The token of the innermost Leasehold lock the calling thread holds, if any. A lock whose
     * lease has ended (or was released) no longer counts, even if it was never unlocked.
     */
    public static OptionalLong currentToken() {
        Deque<Ticket> d = TICKETS.get();
        while (!d.isEmpty() && !d.peek().isValid()) {
            d.pop();
        }
        Ticket t = d.peek();
        if (t == null) {
            TICKETS.remove();
            return OptionalLong.empty();
        }
        return OptionalLong.of(t.token());
    }

    /**
     * Asks the server whether the token of {@link #currentToken()} is still the key's active
     * grant (PROTOCOL.md section 11, {@link Ticket#check()}), for a guarded resource that cannot
     * remember the highest token it has seen. One round trip on the calling thread. Act only on
     * {@link CheckOutcome.Current}.
     *
     * @return the check's outcome, or NotCurrent if the thread holds no valid Leasehold lock
     */
    public static CheckOutcome checkCurrentToken() {
        currentToken(); // drops the tickets whose lease has ended
        Ticket t = TICKETS.get().peek();
        if (t == null) {
            TICKETS.remove();
            return new CheckOutcome.NotCurrent();
        }
        return t.check();
    }

    static void push(Ticket ticket) {
        TICKETS.get().push(ticket);
    }

    static void pop(Ticket ticket) {
        Deque<Ticket> d = TICKETS.get();
        d.removeFirstOccurrence(ticket);
        if (d.isEmpty()) {
            TICKETS.remove();
        }
    }
}
