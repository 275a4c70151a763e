package dev.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's provider contract, rewritten from the test names and assertions of
 * {@code shedlock-test-support}'s {@code AbstractLockProviderIntegrationTest} (that jar is not
 * published). One difference: the lock name is fresh for each test instead of a static one,
 * because all tests share one running server and a test may leave its lock held on purpose
 * (lockAtLeastFor).
 */
abstract class AbstractLockProviderIntegrationTest {

    protected static final Duration LOCK_AT_LEAST_FOR = Duration.ofSeconds(2);

    protected final String LOCK_NAME1 = "test-" + UUID.randomUUID();

    protected abstract LockProvider getLockProvider();

    protected abstract void assertUnlocked(String lockName);

    protected abstract void assertLocked(String lockName);

    @Test
    void shouldCreateLock() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1));
        assertThat(lock).isNotEmpty();
        assertLocked(LOCK_NAME1);
        lock.get().unlock();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void shouldNotReturnSecondLock() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1));
        assertThat(lock).isNotEmpty();
        assertThat(getLockProvider().lock(lockConfig(LOCK_NAME1))).isEmpty();
        lock.get().unlock();
    }

    @Test
    void shouldCreateTwoIndependentLocks() {
        String name2 = LOCK_NAME1 + "-2";
        Optional<SimpleLock> lock1 = getLockProvider().lock(lockConfig(LOCK_NAME1));
        assertThat(lock1).isNotEmpty();
        Optional<SimpleLock> lock2 = getLockProvider().lock(lockConfig(name2));
        assertThat(lock2).isNotEmpty();
        lock1.get().unlock();
        lock2.get().unlock();
        assertUnlocked(LOCK_NAME1);
        assertUnlocked(name2);
    }

    @Test
    void shouldLockTwiceInARow() {
        Optional<SimpleLock> lock1 = getLockProvider().lock(lockConfig(LOCK_NAME1));
        assertThat(lock1).isNotEmpty();
        lock1.get().unlock();
        Optional<SimpleLock> lock2 = getLockProvider().lock(lockConfig(LOCK_NAME1));
        assertThat(lock2).isNotEmpty();
        lock2.get().unlock();
    }

    @Test
    void shouldTimeout() throws InterruptedException {
        doTestTimeout(Duration.ofMillis(50));
    }

    /** Locks for {@code lockAtMostFor} and never unlocks: the lock must be free after twice that. */
    protected void doTestTimeout(Duration lockAtMostFor) throws InterruptedException {
        LockConfiguration configWithShortTimeout = lockConfig(LOCK_NAME1, lockAtMostFor, Duration.ZERO);
        Optional<SimpleLock> lock1 = getLockProvider().lock(configWithShortTimeout);
        assertThat(lock1).isNotEmpty();
        Thread.sleep(lockAtMostFor.multipliedBy(2).toMillis()); // the lease must really run out
        assertUnlocked(LOCK_NAME1);
        Optional<SimpleLock> lock2 = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofMillis(50),
                Duration.ZERO));
        assertThat(lock2).isNotEmpty();
        lock2.get().unlock();
    }

    @Test
    void shouldBeAbleToLockRightAfterUnlock() {
        LockConfiguration lockConfiguration = lockConfig(LOCK_NAME1);
        LockProvider lockProvider = getLockProvider();
        for (int i = 0; i < 10; i++) {
            Optional<SimpleLock> lock = lockProvider.lock(lockConfiguration);
            assertThat(lockProvider.lock(lockConfiguration)).isEmpty();
            assertThat(lock).isNotEmpty();
            lock.get().unlock();
        }
    }

    @Test
    void fuzzTestShouldPass() throws Exception {
        new FuzzTester(getLockProvider(), LOCK_NAME1).doFuzzTest();
    }

    @Test
    void shouldLockAtLeastFor() throws InterruptedException {
        doTestShouldLockAtLeastFor(100);
    }

    protected void doTestShouldLockAtLeastFor(int sleepForMs) throws InterruptedException {
        Duration lockAtLeastFor = LOCK_AT_LEAST_FOR;
        LockConfiguration configWithGracePeriod = lockConfig(LOCK_NAME1, lockAtLeastFor.multipliedBy(2),
                lockAtLeastFor);
        Optional<SimpleLock> lock1 = getLockProvider().lock(configWithGracePeriod);
        assertThat(lock1).isNotEmpty();
        lock1.get().unlock();

        // cannot acquire the lock: lockAtLeastFor has not passed yet
        Optional<SimpleLock> lock2 = getLockProvider().lock(configWithGracePeriod);
        assertThat(lock2).isEmpty();

        Thread.sleep(lockAtLeastFor.toMillis() + sleepForMs); // lockAtLeastFor must really pass
        Optional<SimpleLock> lock3 = getLockProvider().lock(configWithGracePeriod);
        assertThat(lock3).isNotEmpty();
        lock3.get().unlock();
    }

    protected static LockConfiguration lockConfig(String name) {
        return lockConfig(name, Duration.ofMinutes(5), Duration.ZERO);
    }

    protected static LockConfiguration lockConfig(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        Instant now = ClockProvider.now();
        return new LockConfiguration(now, name, lockAtMostFor, lockAtLeastFor);
    }
}
