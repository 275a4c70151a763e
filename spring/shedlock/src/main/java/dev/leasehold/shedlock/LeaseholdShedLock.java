package dev.leasehold.shedlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.OptionalLong;

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

    private static final ThreadLocal<Deque<Long>> TOKENS = ThreadLocal.withInitial(ArrayDeque::new);

    private LeaseholdShedLock() {
    }

    /** The token of the innermost Leasehold lock the calling thread holds, if any. */
    public static OptionalLong currentToken() {
        Long t = TOKENS.get().peek();
        return t == null ? OptionalLong.empty() : OptionalLong.of(t);
    }

    static void push(long token) {
        TOKENS.get().push(token);
    }

    static void pop(long token) {
        Deque<Long> d = TOKENS.get();
        d.removeFirstOccurrence(token);
        if (d.isEmpty()) {
            TOKENS.remove();
        }
    }
}
