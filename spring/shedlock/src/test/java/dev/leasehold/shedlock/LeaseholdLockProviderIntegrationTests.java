package dev.leasehold.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.testing.support.LoopbackServer;
import dev.leasehold.testing.support.Wait;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor.TaskResult;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import net.javacrumbs.shedlock.support.LockException;

/**
 * {@link LeaseholdLockProvider} against a real Leasehold server (its jar, started on loopback):
 * ShedLock's provider contract (the two abstract classes), plus what only Leasehold adds.
 * {@code assertLocked} probes with a second client: an immediate acquire is TimedOut;
 * {@code assertUnlocked}: it is Acquired (and released at once).
 */
class LeaseholdLockProviderIntegrationTests extends AbstractExtensibleLockProviderIntegrationTest {

    private static LeaseholdClient client;
    private static LeaseholdClient probe;
    private static LeaseholdLockProvider provider;

    @BeforeAll
    static void start() {
        LoopbackServer server = LoopbackServer.shared();
        client = LeaseholdClient.create(server.address());
        probe = LeaseholdClient.create(server.address());
        provider = new LeaseholdLockProvider(client);
    }

    @AfterAll
    static void stop() {
        provider.close();
        client.close();
        probe.close();
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(probe.acquire("shedlock/" + lockName, 0, 1)).as("%s is locked", lockName)
                .isInstanceOf(AcquireOutcome.TimedOut.class);
    }

    @Override
    protected void assertUnlocked(String lockName) {
        AcquireOutcome o = probe.acquire("shedlock/" + lockName, 0, 1);
        assertThat(o).as("%s is unlocked", lockName).isInstanceOf(AcquireOutcome.Acquired.class);
        ((AcquireOutcome.Acquired) o).ticket().release();
    }

    /** Leases are whole seconds: like ShedLock's etcd and memcached providers, test with 1 s. */
    @Override
    @Test
    void shouldTimeout() throws InterruptedException {
        doTestTimeout(Duration.ofSeconds(1));
    }

    // ------------------------------------------------------------------ beyond ShedLock's contract

    @Test
    void theFencingTokenIsAvailableInsideTheTaskAndGrows() throws Throwable {
        DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            TaskResult<Long> r = executor.executeWithLock(() -> {
                assertLocked(LOCK_NAME1);
                return LeaseholdShedLock.currentToken().orElseThrow();
            }, lockConfig(LOCK_NAME1));
            assertThat(r.wasExecuted()).isTrue();
            tokens.add(r.getResult());
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
        assertThat(LeaseholdShedLock.currentToken()).isEqualTo(OptionalLong.empty());
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void theCurrentTokenCanBeCheckedWithTheServer() {
        assertThat(LeaseholdShedLock.checkCurrentToken()).as("no lock held")
                .isInstanceOf(dev.leasehold.client.CheckOutcome.NotCurrent.class);
        SimpleLock lock = provider.lock(lockConfig(LOCK_NAME1)).orElseThrow();
        long token = ((LeaseholdLockProvider.Lock) lock).token();
        assertThat(LeaseholdShedLock.checkCurrentToken()).isInstanceOf(dev.leasehold.client.CheckOutcome.Current.class);
        lock.unlock();
        assertThat(probe.check("shedlock/" + LOCK_NAME1, token)).isInstanceOf(
                dev.leasehold.client.CheckOutcome.NotCurrent.class);
    }

    @Test
    void theLockKnowsItsToken() {
        SimpleLock lock = provider.lock(lockConfig(LOCK_NAME1)).orElseThrow();
        long token = ((LeaseholdLockProvider.Lock) lock).token();
        assertThat(LeaseholdShedLock.currentToken()).hasValue(token);
        lock.unlock();
        assertThat(LeaseholdShedLock.currentToken()).isEmpty();
    }

    @Test
    void anUnreachableServerIsALockExceptionNotASkippedTask() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        try (LeaseholdClient nowhere = LeaseholdClient.create(ClientOptions.builder()
                .transportDeadline(Duration.ofMillis(500)).build(), "127.0.0.1:" + closed);
                LeaseholdLockProvider p = new LeaseholdLockProvider(nowhere)) {
            assertThatThrownBy(() -> p.lock(lockConfig(LOCK_NAME1))).isInstanceOf(LockException.class)
                    .hasMessageContaining("unavailable");
        }
    }

    @Test
    void wallClockSkewIsIgnored() {
        // A node whose wall clock is an hour ahead: its createdAt is in the future. ShedLock's
        // storage providers would compute lockAtMostUntil from it; this provider measures from
        // lock() on the monotonic clock, so the lock behaves exactly the same.
        ClockProvider.setClock(Clock.offset(Clock.systemUTC(), Duration.ofHours(1)));
        try {
            LockConfiguration skewed = lockConfig(LOCK_NAME1, Duration.ofSeconds(10), Duration.ZERO);
            assertThat(skewed.getLockAtMostUntil()).isAfter(Instant.now().plus(Duration.ofMinutes(59)));
            SimpleLock lock = provider.lock(skewed).orElseThrow();
            assertLocked(LOCK_NAME1);
            lock.unlock();
            assertUnlocked(LOCK_NAME1);
        } finally {
            ClockProvider.setClock(Clock.system(ZoneOffset.UTC));
        }
    }

    @Test
    void worksUnderShedLocksKeepAliveLockProvider() {
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try {
            KeepAliveLockProvider keepAlive = new KeepAliveLockProvider(provider, scheduler);
            Optional<SimpleLock> lock = keepAlive.lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(30), Duration.ZERO));
            assertThat(lock).isNotEmpty();
            assertLocked(LOCK_NAME1);
            assertThat(keepAlive.lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
            lock.get().unlock();
            assertUnlocked(LOCK_NAME1);
        } finally {
            scheduler.shutdownNow();
        }
    }

    @Test
    void aLockAtMostForBeyondTheLongestLeaseIsHeld() {
        // 5 min is more than the 255 s a lease can be: the provider asks for 255 s and extends
        // internally (every 85 s) until lockAtMostUntil. Here: held, released on unlock.
        SimpleLock lock = provider.lock(lockConfig(LOCK_NAME1, Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
        assertLocked(LOCK_NAME1);
        lock.unlock();
        assertUnlocked(LOCK_NAME1);
    }

    @Test
    void beyondTheLongestLeaseTheProviderExtendsUntilLockAtMostForThenLetsGo() throws Exception {
        // The same path as lockAtMostFor > 255 s, scaled down: leases of at most 2 s, and a
        // lockAtMostFor of 5 s that is never unlocked. Held after 3 s (the first lease alone
        // would have ended), free by about a second after 5 s.
        try (LeaseholdLockProvider p = new LeaseholdLockProvider(client)) {
            p.setMaxLeaseSeconds(2);
            long t0 = System.nanoTime();
            assertThat(p.lock(lockConfig(LOCK_NAME1, Duration.ofSeconds(5), Duration.ZERO))).isNotEmpty();
            Thread.sleep(3000); // past the first 2 s lease: only the extensions hold it now
            assertLocked(LOCK_NAME1);
            Wait.untilAsserted(LOCK_NAME1 + " to be let go after lockAtMostFor (5 s)", Duration.ofSeconds(10),
                    () -> assertUnlocked(LOCK_NAME1));
            Duration heldFor = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(heldFor).isBetween(Duration.ofMillis(4900), Duration.ofMillis(7500));
        }
    }

    @Test
    void badNamesAreRejectedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> provider.lock(lockConfig("x".repeat(600))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("512");
        assertThatThrownBy(() -> provider.lock(lockConfig("a\nb"))).isInstanceOf(IllegalArgumentException.class);
    }
}
