package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.client.internal.Session;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.RequestType;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The Java client's revision 1.4 slice against the real server, over real sockets (PROTOCOL.md
 * 9.13 and 9.14): the opening Hello, millisecond waits sent as {@code M}, Withdraw of an
 * interrupted or cancelled acquire (the grant that races it released), and the fall back to 1.3
 * frames when a server answers the Hello with {@code X 1} (played by the {@link FaultProxy} in
 * front of the real server).
 */
class ClientProtocol14IntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    @RegisterExtension
    final ClientFixture fx = new ClientFixture(server, "p14/");
    private FaultProxy proxy;
    private LeaseholdClient direct;
    private String key;

    @BeforeEach
    void setUp() {
        proxy = fx.proxy();
        direct = fx.direct();
        key = fx.key();
    }

    private LeaseholdClient viaProxy(ClientOptions.Builder options) {
        return fx.viaProxy(options);
    }

    private static Ticket ticket(AcquireOutcome o) {
        return ClientFixture.ticket(o);
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    @Test
    void aSessionOpensWithHelloAloneAndAcquiresGoOutAsMilliAcquires() {
        LeaseholdClient c = viaProxy(ClientOptions.builder());
        Ticket t = ticket(c.acquire(key, Duration.ofMillis(1500), 10));
        assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(proxy.requests().get(0).type()).as("the first frame of the session").isEqualTo(RequestType.HELLO);
        assertThat(proxy.requests()).noneMatch(r -> r.type() == RequestType.PING);
        assertThat(proxy.acquires()).singleElement().satisfies(a -> {
            assertThat(a.milli()).isTrue();
            assertThat(a.waitMillis()).isBetween(1000L, 1500L);
        });
        assertThat(c.engine().sessions()).allSatisfy(s -> assertThat(s.speaks14()).isTrue());
        assertThat(c.engine().sessions()).allSatisfy(s -> assertThat(s.maxWaitMillis()).isEqualTo(255_000L));
    }

    @Test
    void tryLockOfTwoHundredMillisecondsOnAHeldKeyEndsAfterTwoHundredMilliseconds() throws Exception {
        Ticket held = ticket(direct.acquire(key, 0, 30));
        FencedLock lock = direct.readWriteLock(key, 30).writeLock();
        long start = System.nanoTime();
        boolean got = lock.tryLock(200, TimeUnit.MILLISECONDS);
        long took = millisSince(start);
        System.out.println("tryLock(200 ms) on a held key (1.4 server) returned " + got + " after " + took + " ms");
        assertThat(got).isFalse();
        assertThat(took).isGreaterThanOrEqualTo(200).isLessThan(1500);
        held.release();
    }

    @Test
    void aWaitAboveTheServersMaxWaitIsNotSent() {
        AcquireOutcome o = direct.acquire(key, Duration.ofSeconds(300), 10);
        assertThat(o).isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                u -> assertThat(u.reason()).contains("max-wait").contains("255000 ms"));
    }

    @Test
    void anInterruptedLockWhileQueuedIsWithdrawnAndLeavesNoWaiter() throws Exception {
        Ticket held = ticket(direct.acquire(key, 0, 30));
        LeaseholdClient c = viaProxy(ClientOptions.builder());
        FencedLock lock = c.readWriteLock(key, 30).writeLock();
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                lock.lockInterruptibly();
                ended.set(new AssertionError("granted"));
            } catch (Throwable e) {
                ended.set(e);
            }
        });
        waiter.start();
        Wait.until("the acquire reached the server", Duration.ofSeconds(5), () -> proxy.acquires().size(), n -> n == 1);
        long owner = proxy.acquires().get(0).owner();
        long start = System.nanoTime();
        waiter.interrupt();
        waiter.join(2000);
        long took = millisSince(start);
        System.out.println("lockInterruptibly() ended " + took + " ms after the interrupt");
        assertThat(waiter.isAlive()).isFalse();
        assertThat(took).isLessThan(1000);
        assertThat(ended.get()).isInstanceOf(InterruptedException.class);
        assertThat(lock.ticket()).isEmpty();
        Wait.until("the withdrawn acquire's T", Duration.ofSeconds(5), proxy::answers,
                as -> as.stream().anyMatch(a -> a.answer() instanceof Answer.TimedOut t && t.owner() == owner));
        assertThat(proxy.requests()).anySatisfy(r -> {
            assertThat(r.type()).isEqualTo(RequestType.WITHDRAW);
            assertThat(r.tokenOrOwnerOrNonce()).isEqualTo(owner);
        });
        assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
        // No waiter was left ahead: a single immediate attempt gets the key at once.
        ticket(direct.acquire(key, 0, 10)).release();
        assertThat(proxy.grantedToken(owner)).isNull();
    }

    @Test
    void aCancelledAsyncAcquireIsWithdrawn() throws Exception {
        Ticket held = ticket(direct.acquire(key, 0, 30));
        LeaseholdClient c = viaProxy(ClientOptions.builder());
        CompletableFuture<AcquireOutcome> f = c.acquireAsync(key, Duration.ofSeconds(20), 10);
        Wait.until("the acquire reached the server", Duration.ofSeconds(5), () -> proxy.acquires().size(), n -> n == 1);
        long owner = proxy.acquires().get(0).owner();
        f.cancel(true);
        Wait.until("the withdrawn acquire's T", Duration.ofSeconds(5), proxy::answers,
                as -> as.stream().anyMatch(a -> a.answer() instanceof Answer.TimedOut t && t.owner() == owner));
        held.release();
        ticket(direct.acquire(key, 0, 10)).release();
    }

    @Test
    void aGrantThatRacesTheWithdrawIsReleasedAndTheCallerHoldsNothing() throws Exception {
        Ticket held = ticket(direct.acquire(key, 0, 30));
        LeaseholdClient c = viaProxy(ClientOptions.builder());
        AtomicReference<AcquireOutcome> outcome = new AtomicReference<>();
        Thread waiter = new Thread(() -> outcome.set(c.acquire(key, Duration.ofSeconds(20), 30)));
        waiter.start();
        Wait.until("the acquire reached the server", Duration.ofSeconds(5), () -> proxy.acquires().size(), n -> n == 1);
        long owner = proxy.acquires().get(0).owner();
        proxy.delayClientToServer(Duration.ofMillis(400)); // the W reaches the server after the grant
        long start = System.nanoTime();
        waiter.interrupt();
        waiter.join(2000);
        System.out.println("interrupted acquire ended " + millisSince(start) + " ms after the interrupt: " + outcome.get());
        assertThat(outcome.get()).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED); // grants the key to the queued acquire
        Long token = Wait.until("the grant to the withdrawn acquire", Duration.ofSeconds(5),
                () -> proxy.grantedToken(owner), t -> t != null);
        Wait.until("the client's release of that grant", Duration.ofSeconds(5), proxy::releasedTokens,
                ts -> ts.contains(token));
        long releasedAt = System.nanoTime();
        // The key is free again: the client released the grant nobody holds.
        Ticket next = ticket(direct.acquire(key, 5, 10));
        System.out.println("raced grant " + token + " released; the next acquire got the key "
                + millisSince(releasedAt) + " ms after the release was seen");
        assertThat(next.token()).isGreaterThan(token);
        assertThat(proxy.requests()).anyMatch(r -> r.type() == RequestType.WITHDRAW);
        next.release();
    }

    @Test
    void aServerThatAnswersHelloWithUnknownOpGetsOneThreeFramesAndNothingIsLost() throws Exception {
        proxy.refuseHello(true);
        LeaseholdClient c = viaProxy(ClientOptions.builder().poolSize(2));
        int n = 50;
        List<CompletableFuture<AcquireOutcome>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(c.acquireAsync(key + "/" + i, 5, 10));
        }
        int acquired = 0;
        for (CompletableFuture<AcquireOutcome> f : all) {
            Ticket t = ticket(f.get(10, TimeUnit.SECONDS));
            acquired++;
            t.release();
        }
        System.out.println("mixed versions: " + acquired + "/" + n + " acquired; hellos refused "
                + proxy.hellosRefused() + "; connections " + proxy.connectionsAccepted());
        assertThat(acquired).isEqualTo(n);
        assertThat(proxy.hellosRefused()).isGreaterThanOrEqualTo(1);
        assertThat(proxy.acquires()).hasSize(n).noneMatch(FaultProxy.SeenAcquire::milli);
        assertThat(c.engine().sessions()).allSatisfy(s -> assertThat(s.speaks14()).isFalse());

        // On 1.3 a millisecond wait is rounded up to whole seconds, as before 1.4.
        Ticket held = ticket(direct.acquire(key, 0, 30));
        long start = System.nanoTime();
        boolean got = c.readWriteLock(key, 30).writeLock().tryLock(200, TimeUnit.MILLISECONDS);
        long took = millisSince(start);
        System.out.println("tryLock(200 ms) on a held key (1.3 frames) returned " + got + " after " + took + " ms");
        assertThat(got).isFalse();
        assertThat(took).isGreaterThanOrEqualTo(1000);
        held.release();
    }

    @Test
    void protocolRevisionOneThreeNeverSendsAHello() {
        LeaseholdClient c = viaProxy(ClientOptions.builder().protocolRevision("1.3"));
        ticket(c.acquire(key, Duration.ofMillis(300), 10)).release();
        assertThat(proxy.requests()).noneMatch(r -> r.type() == RequestType.HELLO);
        assertThat(proxy.acquires()).singleElement().satisfies(a -> assertThat(a.milli()).isFalse());
        List<Session> sessions = c.engine().sessions();
        assertThat(sessions).allSatisfy(s -> assertThat(s.speaks14()).isFalse());
    }
}
