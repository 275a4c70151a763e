package dev.leasehold.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.dao.CannotAcquireLockException;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.LossReason;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.testing.support.LoopbackServer;
import dev.leasehold.testing.support.Wait;

/**
 * {@link LeaseholdLockRegistry} against a real Leasehold server (its jar on loopback). The test
 * names follow the ones Spring Integration's Redis, JDBC and ZooKeeper registry tests share;
 * then FIFO across registries, lease loss, the fencing token and interrupts. Each test uses its
 * own registry key, so tests cannot see each other's locks. {@code probe} is a second client
 * that checks the server's view: an immediate acquire is TimedOut while the key is held.
 */
class LeaseholdLockRegistryIntegrationTests {

    private static LoopbackServer server;
    private static LeaseholdClient client;
    private static LeaseholdClient otherClient;
    private static LeaseholdClient probe;

    private final String registryKey = "t-" + UUID.randomUUID();
    private final ExecutorService executor = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() {
        server = LoopbackServer.shared();
        client = LeaseholdClient.create(server.address());
        otherClient = LeaseholdClient.create(server.address());
        probe = LeaseholdClient.create(server.address());
    }

    @AfterAll
    static void stop() {
        client.close();
        otherClient.close();
        probe.close();
    }

    @AfterEach
    void shutdown() {
        executor.shutdownNow();
    }

    private LeaseholdLockRegistry registry() {
        return new LeaseholdLockRegistry(client, registryKey);
    }

    /** Another JVM, as far as the server can tell: its own client (own sessions). */
    private LeaseholdLockRegistry otherRegistry() {
        return new LeaseholdLockRegistry(otherClient, registryKey);
    }

    @Test
    void theReadWriteLockViewSharesReadsAndItsWriteLockIsObtainsLock() throws Exception {
        LeaseholdLockRegistry registry = registry();
        dev.leasehold.client.FencedReadWriteLock rw = registry.obtainReadWriteLock("rw");
        dev.leasehold.client.FencedReadWriteLock other = otherRegistry().obtainReadWriteLock("rw");
        // The views' holds belong to threads: the second reader locks and unlocks on one thread of its own.
        ExecutorService otherReader = Executors.newSingleThreadExecutor();
        try {
            assertThat(rw.readLock().tryLock()).isTrue();
            assertThat(otherReader.submit(() -> other.readLock().tryLock()).get(10, TimeUnit.SECONDS))
                    .as("a second reader at once").isTrue();
            LeaseholdLock exclusive = otherRegistry().obtain("rw");
            assertThat(executor.submit(() -> exclusive.tryLock()).get(10, TimeUnit.SECONDS))
                    .as("obtain(key) is the write lock: no writer while readers hold").isFalse();
            long readToken = rw.readLock().token();
            rw.readLock().unlock();
            otherReader.submit(() -> other.readLock().unlock()).get(10, TimeUnit.SECONDS);
            assertThat(rw.writeLock().tryLock(3, TimeUnit.SECONDS)).isTrue();
            assertThat(rw.writeLock().token()).isGreaterThan(readToken);
            rw.writeLock().unlock();
        } finally {
            otherReader.shutdownNow();
        }
    }

    @Test
    void theSemaphoreViewHandsOutFencedPermits() {
        dev.leasehold.client.FencedSemaphore sem = registry().obtainSemaphore("sem", 2);
        dev.leasehold.client.Ticket a = sem.tryAcquire(java.time.Duration.ZERO).orElseThrow();
        dev.leasehold.client.Ticket b = sem.tryAcquire(java.time.Duration.ZERO).orElseThrow();
        assertThat(b.token()).isGreaterThan(a.token());
        assertThat(otherRegistry().obtainSemaphore("sem", 2).tryAcquire(java.time.Duration.ZERO)).isEmpty();
        assertThatThrownBy(() -> otherRegistry().obtainSemaphore("sem", 3).tryAcquire(java.time.Duration.ZERO))
                .isInstanceOf(dev.leasehold.client.SharedLimitException.class);
        a.close();
        b.close();
    }

    private void assertLocked(String key) {
        assertThat(probe.acquire("si/" + registryKey + "/" + key, 0, 1)).as("%s is held", key)
                .isInstanceOf(AcquireOutcome.TimedOut.class);
    }

    /**
     * Free for a newcomer within 3 s. Not an immediate attempt: a {@code tryLock(t)} that gave up
     * client-side leaves its waiter on the server until ⌈t⌉ s (there is no cancel on the wire); if
     * the unlock hands the key to that waiter, its client releases the late grant at once. A key
     * still held by a live lock (30 s lease) would time this out.
     */
    private void assertUnlocked(String key) {
        AcquireOutcome o = probe.acquire("si/" + registryKey + "/" + key, 3, 1);
        assertThat(o).as("%s is free", key).isInstanceOf(AcquireOutcome.Acquired.class);
        ((AcquireOutcome.Acquired) o).ticket().release();
    }

    @Test
    void testLock() {
        LeaseholdLockRegistry registry = registry();
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain("foo");
            lock.lock();
            try {
                assertLocked("foo");
                assertThat(registry.obtain("foo")).isSameAs(lock);
            } finally {
                lock.unlock();
            }
        }
        assertUnlocked("foo");
    }

    @Test
    void testLockInterruptibly() throws Exception {
        LeaseholdLockRegistry registry = registry();
        for (int i = 0; i < 10; i++) {
            Lock lock = registry.obtain("foo");
            lock.lockInterruptibly();
            assertLocked("foo");
            lock.unlock();
        }
        assertUnlocked("foo");
    }

    @Test
    void testReentrantLock() throws Exception {
        assertReentrant(Lock::lock);
    }

    @Test
    void testReentrantLockInterruptibly() throws Exception {
        assertReentrant(Lock::lockInterruptibly);
    }

    /** The thread holding a key's lock takes it again through {@code take}, and still holds it after one unlock. */
    private void assertReentrant(LockCall take) throws Exception {
        LeaseholdLockRegistry registry = registry();
        Lock lock1 = registry.obtain("foo");
        take.lock(lock1);
        try {
            Lock lock2 = registry.obtain("foo");
            assertThat(lock2).isSameAs(lock1);
            take.lock(lock2);
            lock2.unlock();
            assertLocked("foo");
        } finally {
            lock1.unlock();
        }
        assertUnlocked("foo");
    }

    /** {@code Lock::lock} or {@code Lock::lockInterruptibly}. */
    private interface LockCall {
        void lock(Lock lock) throws InterruptedException;
    }

    @Test
    void testTwoLocks() throws Exception {
        LeaseholdLockRegistry registry = registry();
        Lock lock1 = registry.obtain("foo");
        Lock lock2 = registry.obtain("bar");
        lock1.lockInterruptibly();
        lock2.lockInterruptibly();
        assertLocked("foo");
        assertLocked("bar");
        lock2.unlock();
        lock1.unlock();
        assertUnlocked("foo");
        assertUnlocked("bar");
    }

    @Test
    void testTwoThreadsSecondFailsToGetLock() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock lock1 = registry.obtain("foo");
        lock1.lockInterruptibly();
        Future<Object> result = executor.submit(() -> {
            Lock lock2 = registry.obtain("foo");
            return lock2.tryLock(200, TimeUnit.MILLISECONDS);
        });
        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo(false);
        lock1.unlock();
        assertUnlocked("foo");
    }

    @Test
    void aTimedTryLockSendsItsWaitToTheMillisecondAndLeavesNothingQueued() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock lock1 = registry.obtain("ms");
        lock1.lockInterruptibly();
        LeaseholdLock lock2 = otherRegistry().obtain("ms");
        Future<Long> took = executor.submit(() -> {
            long start = System.nanoTime();
            assertThat(lock2.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
            return (System.nanoTime() - start) / 1_000_000;
        });
        long ms = took.get(10, TimeUnit.SECONDS);
        System.out.println("Spring tryLock(200 ms) on a held key (1.4 server) returned false after " + ms + " ms");
        assertThat(ms).isGreaterThanOrEqualTo(200).isLessThan(1500);
        lock1.unlock();
        // No request parked or still queued on the server: the key is free at once.
        assertThat(probe.acquire("si/" + registryKey + "/ms", 0, 1)).isInstanceOf(AcquireOutcome.Acquired.class);
    }

    /**
     * The loop Spring's {@code LockRegistryLeaderInitiator} runs: {@code tryLock(200 ms)} again and
     * again on a key another instance holds. On 1.3 each call left its request queued for the
     * whole second the wire could carry (up to six at once before the registry parked timed-out requests); on 1.4 the
     * server's wait is the call's, so after each call returns nothing of it stays queued.
     */
    @Test
    void aPollingTryLockLoopLeavesNoWaiterBehind() throws Exception {
        LeaseholdLock held = registry().obtain("polled");
        held.lockInterruptibly();
        LeaseholdLock poller = otherRegistry().obtain("polled");
        long before = server.waiters();
        long most = 0;
        for (int i = 0; i < 10; i++) {
            assertThat(poller.tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
            most = Math.max(most, server.waiters() - before);
        }
        System.out.println("a 200 ms tryLock polling loop, 10 calls: at most " + most
                + " waiter(s) left queued after a call returned");
        assertThat(most).as("waiters left behind by calls that returned").isZero();
        held.unlock();
    }

    @Test
    void anInterruptedLockInterruptiblyIsWithdrawnAndLeavesNoWaiter() throws Exception {
        LeaseholdLock lock1 = registry().obtain("withdrawn");
        lock1.lockInterruptibly();
        LeaseholdLock lock2 = otherRegistry().obtain("withdrawn");
        long before = server.waiters();
        Future<Throwable> waiter = executor.submit(() -> {
            try {
                lock2.lockInterruptibly();
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        Wait.until("the waiter queued on the server", Duration.ofSeconds(10), server::waiters, n -> n > before);
        long start = System.nanoTime();
        waiter.cancel(true); // interrupts lockInterruptibly()
        executor.shutdown();
        assertThat(executor.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
        System.out.println("Spring lockInterruptibly() ended " + (System.nanoTime() - start) / 1_000_000
                + " ms after the interrupt");
        // Withdrawn at once (W, PROTOCOL.md 9.14), not when its 255 s wait would have run out.
        Wait.until("the withdrawn waiter gone from the server", Duration.ofSeconds(5), server::waiters,
                n -> n == before);
        lock1.unlock();
        // Nobody was granted the key on unlock: the next immediate attempt gets it.
        assertThat(probe.acquire("si/" + registryKey + "/withdrawn", 0, 1)).isInstanceOf(AcquireOutcome.Acquired.class);
    }

    @Test
    void testTwoThreads() throws Exception {
        LeaseholdLockRegistry registry = registry();
        assertOtherThreadWaitsForUnlock(registry.obtain("foo"), () -> registry.obtain("foo"));
        assertUnlocked("foo");
    }

    @Test
    void testTwoThreadsDifferentRegistries() throws Exception {
        LeaseholdLockRegistry registry1 = registry();
        LeaseholdLockRegistry registry2 = otherRegistry();
        assertOtherThreadWaitsForUnlock(registry1.obtain("foo"), () -> registry2.obtain("foo"));
        assertUnlocked("foo");
    }

    /**
     * The two-thread choreography of Spring Integration's own lock registry tests: this thread
     * locks {@code held}; another thread obtains its lock on the same key and must not get it until
     * this thread unlocks; then it gets it, and unlocks it.
     */
    private void assertOtherThreadWaitsForUnlock(Lock held, Supplier<Lock> other) throws Exception {
        AtomicBoolean locked = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(1);
        held.lockInterruptibly();
        Future<?> second = executor.submit(() -> {
            Lock lock = other.get();
            started.countDown();
            lock.lockInterruptibly();
            try {
                locked.set(true);
            } finally {
                lock.unlock();
            }
            return null;
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).as("the other thread started").isTrue();
        assertThat(locked.get()).as("the other thread locked while this one held the key").isFalse();
        held.unlock();
        second.get(10, TimeUnit.SECONDS);
        assertThat(locked.get()).as("the other thread locked after this one unlocked").isTrue();
    }

    @Test
    void testTwoThreadsWrongOneUnlocks() throws Exception {
        LeaseholdLockRegistry registry = registry();
        Lock lock = registry.obtain("foo");
        lock.lockInterruptibly();
        Future<Throwable> other = executor.submit(() -> {
            try {
                lock.unlock();
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        assertThat(other.get(10, TimeUnit.SECONDS)).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("own");
        assertLocked("foo");
        lock.unlock();
        assertUnlocked("foo");
    }

    @Test
    void testLockRenew() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setRenewal(false);
        registry.setLeaseDuration(Duration.ofSeconds(2));
        Lock lock = registry.obtain("foo");
        lock.lock();
        try {
            Thread.sleep(1200); // part of the 2 s lease must really pass
            registry.renewLock("foo");
            Thread.sleep(1200); // now past the original lease: only the renewal keeps it
            assertLocked("foo");
        } finally {
            lock.unlock();
        }
        assertUnlocked("foo");
    }

    @Test
    void testLockRenewLockNotOwned() {
        LeaseholdLockRegistry registry = registry();
        registry.obtain("foo");
        assertThatThrownBy(() -> registry.renewLock("foo")).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(() -> registry.renewLock("never-obtained")).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void testLockRenewWithCustomTtl() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setRenewal(false);
        LeaseholdLock lock = registry.obtain("foo");
        lock.lock(Duration.ofSeconds(1));
        try {
            registry.renewLock("foo", Duration.ofSeconds(4));
            Thread.sleep(1500); // past the 1 s lease: the 4 s renewal keeps it
            assertLocked("foo");
            assertThat(lock.remaining()).isGreaterThan(Duration.ofSeconds(1));
        } finally {
            lock.unlock();
        }
    }

    @Test
    void testUnlockAfterLockStatusHasBeenExpiredAndLockHasBeenAcquiredByAnotherProcess() throws Exception {
        LeaseholdLockRegistry registry1 = registry();
        LeaseholdLockRegistry registry2 = otherRegistry();
        registry1.setRenewal(false);
        Lock lock1 = registry1.obtain("foo");
        Lock lock2 = registry2.obtain("foo");
        ((LeaseholdLock) lock1).lock(Duration.ofSeconds(1));
        assertThat(lock2.tryLock(5, TimeUnit.SECONDS)).as("granted when lock1's lease ends").isTrue();
        assertThatThrownBy(lock1::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessage(LeaseholdLock.EXPIRED_MESSAGE);
        assertLocked("foo");
        lock2.unlock();
        assertUnlocked("foo");
    }

    @Test
    void testExceptionOnExpire() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setRenewal(false);
        registry.setLeaseDuration(Duration.ofSeconds(1));
        Lock lock = registry.obtain("foo");
        lock.lock();
        Thread.sleep(1500); // the 1 s lease must really run out on the server
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("expiration");
        assertThat(((LeaseholdLock) lock).isHeldByCurrentThread()).isFalse();
        assertUnlocked("foo");
    }

    @Test
    void concurrentObtainCapacityTest() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setCacheCapacity(10);
        List<Future<LeaseholdLock>> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String key = "foo" + i;
            all.add(executor.submit(() -> registry.obtain(key)));
        }
        for (Future<LeaseholdLock> f : all) {
            assertThat(f.get(10, TimeUnit.SECONDS)).isNotNull();
        }
        assertThat(registry.cacheSize()).isEqualTo(10);
    }

    @Test
    void setCapacityTest() {
        LeaseholdLockRegistry registry = registry();
        registry.setCacheCapacity(2);
        registry.obtain("foo:1");
        registry.obtain("foo:2");
        registry.obtain("foo:3");
        assertThat(registry.cacheSize()).isEqualTo(2);
        assertThatThrownBy(() -> registry.setCacheCapacity(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void notUsedLockIsEvictedOnCacheLimit() {
        LeaseholdLockRegistry registry = registry();
        registry.setCacheCapacity(2);
        LeaseholdLock held = registry.obtain("held");
        held.lock();
        try {
            LeaseholdLock idle = registry.obtain("idle");
            registry.obtain("third");
            assertThat(registry.obtain("held")).isSameAs(held);
            assertThat(registry.obtain("idle")).isNotSameAs(idle);
            // The evicted object stays safe: the server, not the cache, arbitrates.
            idle.lock();
            assertLocked("idle");
            idle.unlock();
        } finally {
            held.unlock();
        }
    }

    @Test
    void cannotAcquireLockExceptionOnCacheLimit() {
        LeaseholdLockRegistry registry = registry();
        registry.setCacheCapacity(1);
        LeaseholdLock lock = registry.obtain("foo");
        lock.lock();
        try {
            assertThatThrownBy(() -> registry.obtain("bar")).isInstanceOf(CannotAcquireLockException.class);
        } finally {
            lock.unlock();
        }
        assertThat(registry.obtain("bar")).isNotNull();
    }

    @Test
    void expireUnusedOlderThanDropsOnlyUnheldLocksPastTheAge() {
        LeaseholdLockRegistry registry = registry();
        AtomicLong now = new AtomicLong(0);
        registry.setClock(now::get);
        LeaseholdLock idle = registry.obtain("idle");
        LeaseholdLock held = registry.obtain("held");
        held.lock();
        try {
            now.addAndGet(TimeUnit.SECONDS.toNanos(10));
            registry.expireUnusedOlderThan(20_000);
            assertThat(registry.cacheSize()).isEqualTo(2);
            registry.expireUnusedOlderThan(5_000);
            assertThat(registry.cacheSize()).isEqualTo(1);
            assertThat(registry.obtain("held")).isSameAs(held);
            assertThat(registry.obtain("idle")).isNotSameAs(idle);
        } finally {
            held.unlock();
        }
    }

    // ------------------------------------------------------------------ beyond the shared list

    @Test
    void keysAreStringsOfAtMost512BytesWithoutNewline() {
        LeaseholdLockRegistry registry = registry();
        assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registry.obtain("x".repeat(600))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("512");
        assertThatThrownBy(() -> registry.obtain("a\nb")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registry.obtain("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void fifoAcrossTwoRegistries() throws Exception {
        LeaseholdLockRegistry a = registry();
        LeaseholdLockRegistry b = otherRegistry();
        LeaseholdLock holder = a.obtain("fifo");
        holder.lock();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> waiters = new ArrayList<>();
        String[] names = {"first (b)", "second (a)", "third (b)"};
        // The count is the server's, over all keys: an earlier test's waiter may still be leaving
        // (its session closing), which would move the count under this test. Start from none.
        long queuedBefore = Wait.until("no waiter left on the server from an earlier test (port " + server.port() + ")",
                Duration.ofSeconds(30), server::waiters, n -> n == 0);
        LeaseholdLockRegistry[] via = {b, a, b};
        for (int i = 0; i < 3; i++) {
            String name = names[i];
            LeaseholdLockRegistry r = via[i];
            waiters.add(executor.submit(() -> {
                LeaseholdLock l = r.obtain("fifo");
                l.lock();
                try {
                    order.add(name);
                } finally {
                    l.unlock();
                }
                return null;
            }));
            // The next waiter must reach the server's queue after this one: wait until it is queued.
            long queued = queuedBefore + i + 1;
            Wait.until(queued + " waiters queued on the server (port " + server.port() + ")", Duration.ofSeconds(10), server::waiters,
                    n -> n >= queued);
        }
        assertThat(order).isEmpty();
        holder.unlock();
        for (Future<?> f : waiters) {
            f.get(20, TimeUnit.SECONDS);
        }
        assertThat(order).containsExactly(names);
    }

    /**
     * A loop of short tryLocks keeps one place in the server's queue. Each call's Acquire waits a
     * whole second on the server (the wire wait's unit) and outlives the call; sent anew by each
     * call, they stood five deep ahead of the live one, a release handed the key down that trail
     * of calls already gone, and a later waiter could come in ahead of the live one (how a
     * LockRegistryLeaderInitiator's yield once failed to hand over, in the flakiness campaign).
     * Now the next call waits on the request the last one left, and a grant that comes when no
     * call waits is released at once.
     */
    @Test
    void aLoopOfShortTryLocksKeepsOnePlaceInTheQueue() throws Exception {
        String serverKey = "si/" + registryKey + "/poll";
        AcquireOutcome held = probe.acquire(serverKey, 0, 30);
        assertThat(held).isInstanceOf(AcquireOutcome.Acquired.class);
        // The count is the server's, over all keys: start from none (see fifoAcrossTwoRegistries).
        Wait.until("no waiter left on the server from an earlier test (port " + server.port() + ")",
                Duration.ofSeconds(30), server::waiters, n -> n == 0);
        LeaseholdLock poller = otherRegistry().obtain("poll");
        Future<Integer> polling = executor.submit(() -> {
            for (int i = 1; i <= 12; i++) { // 12 x 200 ms: past two whole-second wire waits
                if (poller.tryLock(200, TimeUnit.MILLISECONDS)) {
                    return i;
                }
            }
            return 0;
        });
        long most = 0;
        int scrapes = 0;
        while (!polling.isDone()) {
            most = Math.max(most, server.waiters());
            scrapes++;
            Thread.sleep(20); // sampling the server's queue while the loop runs, bounded by the loop
        }
        assertThat(polling.get()).as("calls until a grant (0: none, the key is held)").isZero();
        assertThat(most).as("the poller's waiters on the server at once, most seen over %d scrapes", scrapes)
                .isLessThanOrEqualTo(1);
        // The last call's request may still wait on the server: granted now, it is released at once.
        ((AcquireOutcome.Acquired) held).ticket().release();
        AcquireOutcome next = probe.acquire(serverKey, 3, 1);
        assertThat(next).as("the key, free within 3 s of the release").isInstanceOf(AcquireOutcome.Acquired.class);
        ((AcquireOutcome.Acquired) next).ticket().release();
    }

    @Test
    void aLostLeaseFiresTheListenerAndTheEventAndUnlockThrows() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setLeaseDuration(Duration.ofSeconds(3)); // renewed every second
        AtomicReference<String> heard = new AtomicReference<>();
        registry.setLeaseLostListener((key, token, reason) -> heard.set(key + "/" + token + "/" + reason));
        List<Object> events = Collections.synchronizedList(new ArrayList<>());
        registry.setApplicationEventPublisher(events::add);
        LeaseholdLock lock = registry.obtain("foo");
        lock.lock();
        long token = lock.fencingToken();
        // Someone else ends the grant on the server (an operator's `leasehold release`).
        assertThat(probe.release(registry.serverKey("foo"), token, Duration.ofSeconds(5)))
                .isEqualTo(ReleaseOutcome.RELEASED);
        Wait.until("the lease-lost listener to hear of foo's token " + token, Duration.ofSeconds(10), heard::get, h -> h != null);
        assertThat(heard.get()).isEqualTo("foo/" + token + "/" + LossReason.NOT_HELD);
        assertThat(events).singleElement().isInstanceOfSatisfying(LeaseholdLeaseLostEvent.class, e -> {
            assertThat(e.getLockKey()).isEqualTo("foo");
            assertThat(e.getToken()).isEqualTo(token);
        });
        assertThat(lock.isLeaseValid()).isFalse();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertUnlocked("foo");
    }

    @Test
    void renewalKeepsALockPastItsLease() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock lock = registry.obtain("foo");
        lock.lock(Duration.ofSeconds(1));
        try {
            Thread.sleep(2500); // more than two leases must really pass
            assertThat(lock.isLeaseValid()).isTrue();
            assertLocked("foo");
        } finally {
            lock.unlock();
        }
        assertUnlocked("foo");
    }

    @Test
    void aReentrantTryLockReportsALostLeaseOnceThenAcquiresAgain() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setRenewal(false);
        LeaseholdLock lock = registry.obtain("foo");
        assertThat(lock.tryLock()).isTrue();
        long first = lock.fencingToken();
        probe.release(registry.serverKey("foo"), first, Duration.ofSeconds(5));
        assertThat(lock.tryLock()).as("the loss, reported once").isFalse();
        assertThat(lock.tryLock()).as("then a fresh grant").isTrue();
        assertThat(lock.fencingToken()).isGreaterThan(first);
        lock.unlock();
        assertUnlocked("foo");
    }

    @Test
    void theFencingTokenGrowsAndBelongsToTheOwner() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock lock = registry.obtain("foo");
        lock.lock();
        long first = lock.fencingToken();
        assertThat(lock.ticket()).get().extracting(t -> t.token()).isEqualTo(first);
        assertThat(executor.submit(() -> {
            try {
                return lock.fencingToken();
            } catch (IllegalMonitorStateException e) {
                return -1L;
            }
        }).get(10, TimeUnit.SECONDS)).isEqualTo(-1L);
        lock.unlock();
        lock.lock();
        assertThat(lock.fencingToken()).isGreaterThan(first);
        lock.unlock();
        assertThatThrownBy(lock::fencingToken).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void theFencingTokenCanBeCheckedWithTheServer() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock lock = registry.obtain("checked");
        lock.lock();
        long token = lock.fencingToken();
        assertThat(lock.checkFencingToken()).isInstanceOf(dev.leasehold.client.CheckOutcome.Current.class);
        assertThat(probe.check(registry.serverKey("checked"), token)).isInstanceOf(
                dev.leasehold.client.CheckOutcome.Current.class);
        lock.unlock();
        assertThat(probe.check(registry.serverKey("checked"), token)).isInstanceOf(
                dev.leasehold.client.CheckOutcome.NotCurrent.class);
        assertThatThrownBy(lock::checkFencingToken).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void anInterruptedThreadStillReleasesOnUnlockAndKeepsItsInterrupt() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock lock = registry.obtain("foo");
        Future<Boolean> f = executor.submit(() -> {
            lock.lock();
            Thread.currentThread().interrupt();
            lock.unlock();
            return Thread.currentThread().isInterrupted();
        });
        assertThat(f.get(10, TimeUnit.SECONDS)).isTrue();
        assertUnlocked("foo");
    }

    @Test
    void lockInterruptiblyEndsOnInterruptAndLeavesNoGrant() throws Exception {
        LeaseholdLockRegistry registry = registry();
        LeaseholdLock holder = registry.obtain("foo");
        holder.lock();
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<Throwable> f = executor.submit(() -> {
            waiter.set(Thread.currentThread());
            started.countDown();
            try {
                registry.obtain("foo").lockInterruptibly();
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        started.await();
        // the interrupt must come while the waiter is blocked inside lockInterruptibly (on this
        // registry's local lock for the key, or on the server's answer), not before it got there
        Wait.until("the waiter to block in lockInterruptibly (its thread state)", Duration.ofSeconds(10), () -> waiter.get().getState(),
                s -> s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING);
        waiter.get().interrupt();
        assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        holder.unlock();
        Wait.untilAsserted("foo to be free on the server after the holder's unlock", Duration.ofSeconds(10), () -> assertUnlocked("foo"));
    }

    @Test
    void executeLockedKeepsTheTasksExceptionAndAddsTheUnlockFailure() throws Exception {
        LeaseholdLockRegistry registry = registry();
        registry.setRenewal(false);
        registry.setLeaseDuration(Duration.ofSeconds(1));
        assertThatThrownBy(() -> registry.executeLocked("foo", () -> {
            Thread.sleep(1500); // outlive the 1 s lease
            throw new IllegalArgumentException("task failed");
        })).isInstanceOf(IllegalArgumentException.class).hasMessage("task failed")
                .satisfies(e -> assertThat(e.getSuppressed()).singleElement()
                        .isInstanceOf(ConcurrentModificationException.class));
        assertThat(registry.executeLocked("foo", () -> "done")).isEqualTo("done");
    }

    @Test
    void executeLockedPassesTheFencingToken() throws Exception {
        LeaseholdLockRegistry registry = registry();
        long token = registry.executeLocked("foo", Duration.ofSeconds(5), (FencedCallable<Long, RuntimeException>) t -> {
            assertLocked("foo");
            return t;
        });
        assertThat(token).isPositive();
        LeaseholdLock held = registry.obtain("foo");
        CompletableFuture<Void> other = CompletableFuture.runAsync(held::lock, executor);
        other.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> registry.executeLocked("foo", Duration.ofMillis(200), () -> { }))
                .isInstanceOf(TimeoutException.class);
    }

    @Test
    void anUnreachableServerIsCannotAcquireLockException() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        try (LeaseholdClient nowhere = LeaseholdClient.create(ClientOptions.builder()
                .transportDeadline(Duration.ofMillis(300)).connectTimeout(Duration.ofMillis(300)).build(),
                "127.0.0.1:" + closed)) {
            LeaseholdLockRegistry registry = new LeaseholdLockRegistry(nowhere, registryKey);
            registry.setUnavailableTimeout(Duration.ofSeconds(1));
            assertThatThrownBy(() -> registry.obtain("foo").tryLock()).isInstanceOf(CannotAcquireLockException.class);
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> registry.obtain("foo").lock()).isInstanceOf(CannotAcquireLockException.class)
                    .hasMessageContaining("unavailable");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(15));
        }
    }

    @Test
    void newConditionIsNotSupported() {
        assertThatThrownBy(() -> registry().obtain("foo").newCondition())
                .isInstanceOf(UnsupportedOperationException.class);
    }
}
