package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.protocol.RequestType;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Shared holds (PROTOCOL.md section 13) through the official client against the real server:
 * {@code acquireShared}, {@code L} as its own definitive outcome, the read/write lock and
 * semaphore views with their fencing tokens, keep-alive of a shared grant, and the section 9
 * rules for {@code S} through the fault-injecting proxy (the same faults as for Acquire).
 */
class ClientSharedIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private FaultProxy proxy;
    private LeaseholdClient direct;
    private String key;

    @BeforeEach
    void setUp(TestInfo info) throws Exception {
        proxy = FaultProxy.start(server.port());
        closeables.add(proxy);
        direct = client(ClientOptions.builder(), new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()));
        key = "shared/" + info.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private LeaseholdClient via(UnaryOperator<ClientOptions.Builder> options) {
        return client(options.apply(ClientOptions.builder()), proxy.address());
    }

    private LeaseholdClient client(ClientOptions.Builder options, InetSocketAddress... addresses) {
        LeaseholdClient c = LeaseholdClient.create(options.build(), List.of(addresses));
        closeables.add(c);
        return c;
    }

    private static Ticket ticket(AcquireOutcome o) {
        assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
        return ((AcquireOutcome.Acquired) o).ticket();
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    @Test
    void readersShareTheKeyEachWithItsOwnTokenAndTheWriterComesAfterThem() throws Exception {
        Ticket r1 = ticket(direct.acquireShared(key, 0, 0, 30));
        Ticket r2 = ticket(direct.acquireSharedAsync(key, 0, 0, 30).get(10, TimeUnit.SECONDS));
        assertThat(r2.token()).isGreaterThan(r1.token());
        assertThat(direct.acquire(key, 0, 30)).as("the write lock waits for readers").isInstanceOf(AcquireOutcome.TimedOut.class);
        CompletableFuture<AcquireOutcome> writer = direct.acquireAsync(key, 10, 30);
        Wait.until("1 waiter queued on the server (port " + server.port() + ")", Duration.ofSeconds(10),
                () -> server.bean(dev.leasehold.registry.LockRegistry.class).waiters(), n -> n == 1);
        assertThat(direct.acquireShared(key, 0, 0, 30)).as("a reader never overtakes a waiting writer")
                .isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(r1.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(r2.check()).isInstanceOf(CheckOutcome.Current.class);
        assertThat(r2.release()).isEqualTo(ReleaseOutcome.RELEASED);
        Ticket w = ticket(writer.get(10, TimeUnit.SECONDS));
        assertThat(w.token()).isGreaterThan(r2.token());
        w.release();
    }

    @Test
    void aLimitMismatchIsItsOwnDefinitiveOutcomeNamingBothLimits() throws Exception {
        Ticket p = ticket(direct.acquireShared(key, 2, 0, 30));
        AcquireOutcome o = direct.acquireShared(key, 3, 10, 30);
        assertThat(o).isEqualTo(new AcquireOutcome.LimitMismatch(3, 2));
        assertThat(o.isDefinitiveRefusal()).isTrue();
        assertThat(direct.acquireShared(key, 0, 0, 30)).isEqualTo(new AcquireOutcome.LimitMismatch(0, 2));
        assertThat(direct.ping()).as("the session stays usable").isPositive();
        FencedSemaphore wrong = direct.semaphore(key, 5, 30);
        assertThatThrownBy(() -> wrong.tryAcquire(Duration.ZERO)).isInstanceOf(SharedLimitException.class)
                .hasMessageContaining("limit 5").hasMessageContaining("limit 2");
        assertThatThrownBy(() -> direct.readWriteLock(key, 30).readLock().tryLock())
                .isInstanceOf(SharedLimitException.class);
        p.release();
    }

    @Test
    void aSemaphoreHandsOutItsPermitsAsFencedTicketsInOrder() throws Exception {
        FencedSemaphore sem = direct.semaphore(key, 2, 30);
        Ticket a = sem.tryAcquire(Duration.ZERO).orElseThrow();
        Ticket b = sem.tryAcquire(Duration.ZERO).orElseThrow();
        assertThat(b.token()).isGreaterThan(a.token());
        assertThat(sem.tryAcquire(Duration.ZERO)).as("no third permit").isEmpty();
        CompletableFuture<Optional<Ticket>> third = CompletableFuture.supplyAsync(() -> sem.tryAcquire(Duration.ofSeconds(10)));
        Wait.until("1 waiter queued on the server (port " + server.port() + ")", Duration.ofSeconds(10),
                () -> server.bean(dev.leasehold.registry.LockRegistry.class).waiters(), n -> n == 1);
        a.close(); // releases the permit
        Ticket c = third.get(10, TimeUnit.SECONDS).orElseThrow();
        assertThat(c.token()).isGreaterThan(b.token());
        assertThat(b.check()).isInstanceOf(CheckOutcome.Current.class);
        b.close();
        c.close();
    }

    @Test
    void theReadWriteLockViewIsHeldByThreadsAndExposesEachHoldersToken() throws Exception {
        FencedReadWriteLock rw = direct.readWriteLock(key, 30);
        assertThat(rw.readLock().tryLock(1, TimeUnit.SECONDS)).isTrue();
        long mine = rw.readLock().token();
        CompletableFuture<Long> other = CompletableFuture.supplyAsync(() -> {
            rw.readLock().lock();
            try {
                return rw.readLock().token();
            } finally {
                rw.readLock().unlock();
            }
        });
        assertThat(other.get(10, TimeUnit.SECONDS)).as("a second reader at once").isGreaterThan(mine);
        assertThat(rw.writeLock().tryLock()).as("no writer while a reader holds").isFalse();
        assertThatThrownBy(() -> rw.readLock().tryLock()).as("not reentrant").isInstanceOf(IllegalStateException.class);
        rw.readLock().unlock();
        assertThatThrownBy(() -> rw.readLock().unlock()).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(rw.writeLock().tryLock(2, TimeUnit.SECONDS)).isTrue();
        assertThat(rw.writeLock().token()).isGreaterThan(mine);
        rw.writeLock().unlock();
    }

    @Test
    void keepAliveExtendsASharedGrantAndReportsItsLoss() throws Exception {
        Ticket t = ticket(direct.acquireShared(key, 0, 0, 1));
        List<String> events = new CopyOnWriteArrayList<>();
        try (KeepAlive ka = direct.keepAlive(t, 1, (ticket, reason, detail) -> events.add("LOST " + reason))) {
            Thread.sleep(2500); // real time: the server's 1 s lease runs out more than twice over
            assertThat(t.isValid()).isTrue();
            assertThat(t.check()).isInstanceOf(CheckOutcome.Current.class);
            assertThat(direct.release(key, t.token(), Duration.ofSeconds(5))).isEqualTo(ReleaseOutcome.RELEASED);
            Wait.until("the shared ticket's keep-alive to report the lease lost", Duration.ofSeconds(10), ka::isLost, lost -> lost);
            assertThat(ka.lossReason()).contains(LossReason.NOT_HELD);
        }
        assertThat(events).containsExactly("LOST NOT_HELD");
    }

    // ---------------------------------------------------------------- section 9 through the proxy

    @Test
    void aLateConnectionSendsOnlyTheWaitLeftOfTheOneDeadline() throws Exception {
        Ticket held = ticket(direct.acquire(key, 0, 60));
        proxy.acceptDelay(Duration.ofMillis(2200));
        LeaseholdClient c = via(b -> b.poolSize(1).connectTimeout(Duration.ofSeconds(4)));
        long start = System.nanoTime();
        AcquireOutcome o = c.acquireShared(key, 0, 5, 5);
        assertThat(o).isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(proxy.requests()).filteredOn(r -> r.type() == RequestType.SHARED_ACQUIRE
                || r.type() == RequestType.MILLI_ACQUIRE).hasSize(1);
        assertThat(proxy.acquires()).singleElement().satisfies(a -> assertThat(a.waitSeconds()).isBetween(2, 3));
        assertThat(millisSince(start)).isBetween(4_500L, 6_900L);
        held.release();
    }

    @Test
    void aPossiblySentSharedAcquireIsIndeterminateAndNeverResent() throws Exception {
        proxy.cutClientToServerAfter(16); // the opening hello (4 bytes), then 12 bytes of the M (19-byte header)
        LeaseholdClient c = via(b -> b.poolSize(2));
        long start = System.nanoTime();
        assertThat(c.acquireShared(key, 0, 10, 5)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(millisSince(start)).as("at once, not at D").isLessThan(3_000L);
        proxy.cutClientToServerAfter(-1);
        assertThat(c.ping()).isPositive();
        assertThat(proxy.acquireStarts()).isEqualTo(1);
    }

    @Test
    void noAnswerByTheDeadlinePlusGraceIsIndeterminateAndTheServerDropsTheWaiter() throws Exception {
        Ticket held = ticket(direct.acquire(key, 0, 60));
        LeaseholdClient c = via(b -> b.poolSize(1).responseGrace(Duration.ofMillis(500)));
        assertThat(c.ping()).isPositive();
        proxy.swallowAnswers(true);
        long start = System.nanoTime();
        assertThat(c.acquireShared(key, 0, 1, 5)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(millisSince(start)).as("D (1 s) + grace (0.5 s)").isBetween(1_300L, 4_000L);
        held.release();
        // the session was closed: the waiter is gone, so the key is free for others
        Wait.untilAsserted("the dropped shared waiter gone, " + key + " free for another client", Duration.ofSeconds(10), () -> {
            AcquireOutcome o = direct.acquire(key, 0, 5);
            assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
            ((AcquireOutcome.Acquired) o).ticket().release();
        });
    }

    @Test
    void aCorrelatedLimitMismatchStaysDefinitiveThroughTheProxy() throws Exception {
        Ticket p = ticket(direct.acquireShared(key, 4, 0, 30));
        LeaseholdClient c = via(b -> b.poolSize(1));
        proxy.delayServerToClient(Duration.ofMillis(300));
        assertThat(c.acquireShared(key, 2, 0, 5)).isEqualTo(new AcquireOutcome.LimitMismatch(2, 4));
        p.release();
    }
}
