package dev.leasehold.registry;

import dev.leasehold.protocol.HoldMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** A registry on a manual clock, recording every answer it owes to waiters. */
final class RegistryHarness {

    final ManualClock clock = new ManualClock();
    final AtomicLong tokenCounter = new AtomicLong();
    final List<Waiter> answered = new ArrayList<>();
    /** Withdrawals the registry reported to its observer. */
    final java.util.concurrent.atomic.AtomicInteger withdrawals = new java.util.concurrent.atomic.AtomicInteger();
    volatile boolean tokensAvailable = true;
    final LockRegistry registry;

    RegistryHarness(RegistryLimits limits) {
        this(limits, LeaseHorizon.UNBOUNDED);
    }

    RegistryHarness(RegistryLimits limits, LeaseHorizon horizon) {
        registry = new LockRegistry(limits, clock,
                () -> tokensAvailable ? tokenCounter.incrementAndGet() : TokenSource.NONE, horizon,
                w -> {
                    synchronized (answered) {
                        answered.add(w);
                    }
                }, new RegistryObserver() {
                    @Override
                    public void withdrawn() {
                        withdrawals.incrementAndGet();
                    }
                }, 4);
    }

    static RegistryLimits roomy() {
        return new RegistryLimits(100, 1000, 100, 1000);
    }

    AcquireResult acquire(String key, int wait, int lease, long owner, SessionHandle session) {
        return registry.acquire(key(key), HoldMode.EXCLUSIVE, wait * 1000L, lease, owner, clock.nanoTime(), session);
    }

    AcquireResult acquireShared(String key, int wait, int lease, long owner, int limit, SessionHandle session) {
        return registry.acquire(key(key), HoldMode.ofLimit(limit), wait * 1000L, lease, owner, clock.nanoTime(), session);
    }

    /** An acquire with its wait in milliseconds, as an {@code M} carries it. */
    AcquireResult acquireMillis(String key, long waitMillis, int lease, long owner, SessionHandle session) {
        return registry.acquire(key(key), HoldMode.EXCLUSIVE, waitMillis, lease, owner, clock.nanoTime(), session);
    }

    int withdraw(String key, long owner, SessionHandle session) {
        return registry.withdraw(key(key), owner, session);
    }

    ReleaseResult release(String key, long token) {
        return registry.release(key(key), token);
    }

    ExtendResult extend(String key, long token, int lease) {
        return registry.extend(key(key), token, lease);
    }

    /** Moves time and runs the timer, as the server's timer thread would. */
    void tick(long millis) {
        clock.advanceMillis(millis);
        registry.advance();
    }

    List<Waiter> takeAnswers() {
        synchronized (answered) {
            List<Waiter> copy = new ArrayList<>(answered);
            answered.clear();
            return copy;
        }
    }

    static long token(AcquireResult r) {
        return ((AcquireResult.Granted) r).token();
    }

    static Waiter waiter(AcquireResult r) {
        return ((AcquireResult.Queued) r).waiter();
    }

    static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }
}
