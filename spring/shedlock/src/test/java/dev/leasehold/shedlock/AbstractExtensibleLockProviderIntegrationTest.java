package dev.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The extension part of ShedLock's contract, rewritten from the names and assertions of
 * {@code shedlock-test-support}'s {@code AbstractExtensibleLockProviderIntegrationTest}.
 */
abstract class AbstractExtensibleLockProviderIntegrationTest extends AbstractLockProviderIntegrationTest {

    @Override
    protected abstract ExtensibleLockProvider getLockProvider();

    @Test
    void shouldBeAbleToExtendLock() throws InterruptedException {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(2), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        assertLocked(LOCK_NAME1);
        Optional<SimpleLock> newLock = lock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock).isNotEmpty();

        Thread.sleep(2000); // the original lockAtMostFor must really pass
        assertLocked(LOCK_NAME1);
        newLock.get().unlock();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void shouldBeAbleToExtendMultipleTimes() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(2), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        Optional<SimpleLock> newLock = lock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock).isNotEmpty();
        assertLocked(LOCK_NAME1);
        Optional<SimpleLock> newLock2 = newLock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock2).isNotEmpty();
        assertLocked(LOCK_NAME1);
        newLock2.get().unlock();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void shouldNotBeAbleToExtendUnlockedLock() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(2), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        lock.get().unlock();
        assertThatThrownBy(() -> lock.get().extend(Duration.ofSeconds(10), Duration.ZERO))
                .isInstanceOf(IllegalStateException.class);
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void shouldNotBeAbleToExtendExpiredLock() throws InterruptedException {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofMillis(2), Duration.ZERO));
        Thread.sleep(4); // lockAtMostFor must really pass
        assertThat(lock).isNotEmpty();
        Optional<SimpleLock> newLock = lock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock).isEmpty();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void shouldBeAbleToExtendAtLeast() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(10), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        Optional<SimpleLock> newLock = lock.get().extend(Duration.ofSeconds(10), Duration.ofSeconds(9));
        assertThat(newLock).isNotEmpty();
        newLock.get().unlock();
        assertLocked(LOCK_NAME1);
    }

    @Test
    void lockCanNotBeExtendedTwice() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(10), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        Optional<SimpleLock> newLock = lock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock).isNotEmpty();
        assertThatThrownBy(() -> lock.get().extend(Duration.ofSeconds(10), Duration.ZERO))
                .isInstanceOf(IllegalStateException.class);
        newLock.get().unlock();
    }

    @Test
    void lockCanNotBeUnlockedAfterExtending() {
        Optional<SimpleLock> lock = getLockProvider().lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(10), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        Optional<SimpleLock> newLock = lock.get().extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock).isNotEmpty();
        assertThatThrownBy(() -> lock.get().unlock()).isInstanceOf(IllegalStateException.class);
        newLock.get().unlock();
    }
}
