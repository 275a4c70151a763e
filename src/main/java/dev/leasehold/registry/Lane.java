package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A stripe of the key space. All state of the keys that hash here (map, queues, timers) is
 * mutated only under {@link #lock}; critical sections are short and never do I/O, so Netty
 * threads may take it.
 */
final class Lane {

    final ReentrantLock lock = new ReentrantLock();
    final KeyTable keys = new KeyTable();
    final TimerWheel wheel;
    /** Set once this lane has promoted the waiters queued during a recovery grace. */
    boolean graceSettled;
    private long lastNow;
    /**
     * Waiters whose answers were decided by the operation holding the lock; handed out by
     * {@link #takeAnswers()} so the shell delivers them after unlocking.
     */
    private final List<Waiter> answers = new ArrayList<>(4);
    /** Watched keys the operation holding the lock changed ({@link Watching#touched}); null when none. */
    KeyState dirtyFirst;
    /** Watches told an event by the operation holding the lock, to call {@link Watch#afterDecided} on. */
    private final List<Watch> notified = new ArrayList<>(2);

    Lane(long tickNanos, long nowNanos) {
        this.wheel = new TimerWheel(tickNanos, nowNanos);
        this.lastNow = nowNanos;
    }

    /** The clock, but never going backwards within this lane (threads read it at different times). */
    long now(NanoClock clock) {
        long n = clock.nanoTime();
        if (n - lastNow > 0) {
            lastNow = n;
        }
        return lastNow;
    }

    /** Owes {@code w} its answer (lock held). */
    void answer(Waiter w) {
        answers.add(w);
    }

    /** {@code w} was told an event (lock held): it hears {@link Watch#afterDecided} once the lock is let go. */
    void notify(Watch w) {
        if (!w.notified) {
            w.notified = true;
            notified.add(w);
        }
    }

    /** The watches told an event so far, or null if none (lock held). */
    List<Watch> takeNotified() {
        if (notified.isEmpty()) {
            return null;
        }
        List<Watch> out = new ArrayList<>(notified);
        for (Watch w : notified) {
            w.notified = false;
        }
        notified.clear();
        return out;
    }

    /** The answers owed so far, or null if none (lock held): allocates only when there are some. */
    List<Waiter> takeAnswers() {
        if (answers.isEmpty()) {
            return null;
        }
        List<Waiter> out = new ArrayList<>(answers);
        answers.clear();
        return out;
    }
}
