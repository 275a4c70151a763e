package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import dev.leasehold.client.internal.AcquireCall;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The client semantics of PROTOCOL.md section 9, each proven against the real server
 * through a {@link FaultProxy} the test controls. Each test fails without the behaviour it names.
 * Timing bounds are generous (two noisy cores); no fixed ports; everything is closed after each
 * test.
 */
class ClientSemanticsIntegrationTests {

    private static final long SECOND = 1_000_000_000L;

    private static TestServer server;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private FaultProxy proxy;
    private LeaseholdClient direct;
    private String key;

    @BeforeAll
    static void startServer() {
        server = TestServer.start(Map.of());
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @BeforeEach
    void setUp(TestInfo info) throws Exception {
        proxy = proxy(server);
        direct = client(server, ClientOptions.builder());
        key = info.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private FaultProxy proxy(TestServer target) throws Exception {
        FaultProxy p = FaultProxy.start(target.port());
        closeables.add(p);
        return p;
    }

    private LeaseholdClient client(TestServer target, ClientOptions.Builder options) {
        return client(options, new InetSocketAddress(InetAddress.getLoopbackAddress(), target.port()));
    }

    private LeaseholdClient via(FaultProxy p, UnaryOperator<ClientOptions.Builder> options) {
        return client(options.apply(ClientOptions.builder()), p.address());
    }

    private LeaseholdClient client(ClientOptions.Builder options, InetSocketAddress... addresses) {
        LeaseholdClient c = LeaseholdClient.create(options.build(), List.of(addresses));
        closeables.add(c);
        return c;
    }

    /** Takes {@code k} through the direct client (no proxy). */
    private Ticket hold(String k, int leaseSeconds) {
        AcquireOutcome o = direct.acquire(k, 0, leaseSeconds);
        assertThat(o).as("holding %s", k).isInstanceOf(AcquireOutcome.Acquired.class);
        return ((AcquireOutcome.Acquired) o).ticket();
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    private void assertFreeSoon(String k) {
        Wait.untilAsserted(k + " to be free for a direct client", Duration.ofSeconds(8), () -> {
            AcquireOutcome o = direct.acquire(k, 0, 5);
            assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
            ((AcquireOutcome.Acquired) o).ticket().release();
        });
    }

    // 9.2 ------------------------------------------------------------------------------------

    @Test
    void everyCallGetsANewOwner() throws Exception {
        Ticket held = hold(key, 30);
        LeaseholdClient c = via(proxy, b -> b.poolSize(1));
        for (int i = 0; i < 3; i++) {
            assertThat(c.acquire(key, 0, 5)).isInstanceOf(AcquireOutcome.TimedOut.class);
        }
        List<CompletableFuture<AcquireOutcome>> concurrent = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            concurrent.add(c.acquireAsync(key, 0, 5));
        }
        for (CompletableFuture<AcquireOutcome> f : concurrent) {
            assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(AcquireOutcome.TimedOut.class);
        }
        List<FaultProxy.SeenAcquire> seen = proxy.acquires();
        assertThat(seen).hasSize(23).allSatisfy(a -> assertThat(a.key()).isEqualTo(key));
        assertThat(seen.stream().map(FaultProxy.SeenAcquire::owner).distinct()).hasSize(23);
        held.release();
    }

    // 9.3 and 9.5 -------------------------------------------------------------------------------

    @Test
    void aLateConnectionSendsOnlyTheWaitLeftOfTheOneDeadline() {
        Ticket held = hold(key, 60);
        proxy.acceptDelay(Duration.ofMillis(2200)); // the session comes up 2.2 s late
        LeaseholdClient c = via(proxy, b -> b.poolSize(1).connectTimeout(Duration.ofSeconds(4)));
        long start = System.nanoTime();
        AcquireOutcome o = c.acquire(key, 5, 5);
        long elapsed = millisSince(start);
        // the wire wait is ceil(5 - 2.2) = 3, not a fresh 5: T comes about 5 s after the call,
        // not 7.2 s (which would also pass D + grace = 7 s and end Indeterminate)
        assertThat(o).isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(proxy.acquires()).singleElement()
                .satisfies(a -> assertThat(a.waitSeconds()).isBetween(2, 3));
        assertThat(elapsed).isBetween(4_500L, 6_900L);
        held.release();
    }

    @Test
    void wireWaitIsTheTimeLeftRoundedUpAndAtMost255() {
        LeaseholdClient c = via(proxy, b -> b);
        AcquireOutcome o = c.acquire(key, 255, 5);
        assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
        ((AcquireOutcome.Acquired) o).ticket().release();
        o = c.acquire(key, 7, 5);
        ((AcquireOutcome.Acquired) o).ticket().release();
        // a few microseconds have passed since the start: the round-up keeps the full seconds
        assertThat(proxy.acquires()).extracting(FaultProxy.SeenAcquire::waitSeconds).containsExactly(255, 7);
    }

    // 9.4 --------------------------------------------------------------------------------------

    @Test
    void aRequestDefinitelyNotSentMovesToAnotherSessionWithItsOwnerAndDeadline() throws Exception {
        Ticket held = hold(key, 60);
        FaultProxy silent = proxy(server);
        silent.stallServerToClient(true); // TCP works, but the session's opening ping is never answered
        LeaseholdClient c = client(ClientOptions.builder().poolSize(1).connectTimeout(Duration.ofMillis(1500)),
                silent.address(), proxy.address());
        long start = System.nanoTime();
        AcquireCall call = c.startAcquire(key, 5, 5);
        AcquireOutcome r = call.result().get(10, TimeUnit.SECONDS);
        long elapsed = millisSince(start);
        assertThat(r).isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(silent.connectionsAccepted()).isEqualTo(1);
        assertThat(silent.acquireStarts()).isZero();
        // same owner, and the same deadline: 1.5 s were spent, so the wire wait is ceil(3.5) = 4
        assertThat(proxy.acquires()).singleElement().satisfies(a -> {
            assertThat(a.owner()).isEqualTo(call.owner());
            assertThat(a.waitSeconds()).isBetween(3, 4);
        });
        assertThat(elapsed).as("T at the original D (5 s), not 1.5 s later").isBetween(4_500L, 6_300L);
        held.release();
    }

    @Test
    void aPossiblySentAcquireIsNeverResent() throws Exception {
        // the opening hello (4 bytes) passes, then 12 bytes of the M (header 19 bytes), then the cut
        proxy.cutClientToServerAfter(16);
        LeaseholdClient c = via(proxy, b -> b.poolSize(2));
        long start = System.nanoTime();
        AcquireOutcome o = c.acquire(key, 10, 5);
        assertThat(o).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(millisSince(start)).as("at once, not at D").isLessThan(3_000L);
        proxy.cutClientToServerAfter(-1);
        // no path resends it (AcquireCallTests proves that on a manual clock); here a later
        // round trip on the same client shows other sessions work and nothing was resent
        assertThat(c.ping()).isPositive();
        assertThat(proxy.acquireStarts()).isEqualTo(1);
        assertThat(proxy.acquireCount()).isZero();
        assertFreeSoon(key);
    }

    // 9.9 --------------------------------------------------------------------------------------

    @Test
    void aBrokenSessionMakesItsUnansweredAcquiresIndeterminateAtOnce() throws Exception {
        List<Ticket> held = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            held.add(hold(key + i, 60));
        }
        LeaseholdClient c = via(proxy, b -> b.poolSize(1));
        c.ping();
        List<CompletableFuture<AcquireOutcome>> waiting = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            waiting.add(c.acquireAsync(key + i, 60, 5));
        }
        Wait.until("5 Acquires through the proxy", Duration.ofSeconds(10), proxy::acquireCount, n -> n == 5);
        LockRegistry registry = server.bean(LockRegistry.class);
        Wait.until("5 waiters queued on the server", Duration.ofSeconds(10), registry::waiters, n -> n >= 5);
        long start = System.nanoTime();
        proxy.closeAllConnections();
        for (CompletableFuture<AcquireOutcome> f : waiting) {
            assertThat(f.get(5, TimeUnit.SECONDS)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        }
        assertThat(millisSince(start)).isLessThan(2_000L);
        assertThat(proxy.acquireCount()).isEqualTo(5);
        // the server dropped those waiters with the session: released keys become free
        for (int i = 0; i < 5; i++) {
            held.get(i).release();
            assertFreeSoon(key + i);
        }
    }

    @Test
    void aGrantWhoseAnswerIsLostEndsWithItsLease() throws Exception {
        proxy.cutServerToClientAfter(10 + 5); // the hello's answer passes, the A is cut after 5 bytes
        LeaseholdClient c = via(proxy, b -> b.poolSize(1));
        long start = System.nanoTime();
        AcquireOutcome o = c.acquire(key, 5, 2);
        assertThat(o).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(millisSince(start)).isLessThan(2_500L);
        long owner = proxy.acquires().get(0).owner();
        assertThat(proxy.grantedToken(owner)).as("the server did grant").isNotNull();
        // unobserved grant: held until its 2 s lease ends, then free
        assertThat(direct.acquire(key, 0, 5)).isInstanceOf(AcquireOutcome.TimedOut.class);
        AcquireOutcome after = direct.acquire(key, 5, 5);
        assertThat(after).isInstanceOf(AcquireOutcome.Acquired.class);
        assertThat(millisSince(start)).isBetween(1_900L, 5_000L);
        ((AcquireOutcome.Acquired) after).ticket().release();
    }

    // 9.7 --------------------------------------------------------------------------------------

    @Test
    void aGrantArrivingAfterTheDeadlineIsReleasedAndIndeterminate() throws Exception {
        Ticket held = hold(key, 60);
        LeaseholdClient c = via(proxy, b -> b.poolSize(1));
        c.ping();
        proxy.delayServerToClient(Duration.ofMillis(1200));
        long start = System.nanoTime();
        CompletableFuture<AcquireOutcome> f = c.acquireAsync(key, 2, 30);
        // real time: the grant must come at about 1.4 s so that its A, delayed 1.2 s, reaches the
        // gate after D = 2 s (the gate's exact boundary is AcquireCallTests' on a manual clock)
        Thread.sleep(Math.max(0, 1_400 - millisSince(start)));
        assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED); // grant at ~1.4 s, seen at ~2.6 s > D
        AcquireOutcome o = f.get(10, TimeUnit.SECONDS);
        assertThat(o).isInstanceOf(AcquireOutcome.Indeterminate.class);
        long owner = proxy.acquires().get(0).owner();
        Long token = proxy.grantedToken(owner);
        assertThat(token).as("the server granted").isNotNull();
        // compensating release of that exact token, and the key really becomes free
        Wait.until("the compensating Release of token " + token + " (tokens released through the proxy)", Duration.ofSeconds(8),
                proxy::releasedTokens, released -> released.contains(token));
        assertFreeSoon(key);
        assertThat(millisSince(start)).as("freed long before the 30 s lease").isLessThan(15_000L);
    }

    @Test
    void aGrantPastItsSafeValidityIsNotDelivered() {
        // a 1 s lease with a 1.5 s margin is never valid: the gate must refuse it even before D
        LeaseholdClient c = via(proxy, b -> b.marginFloor(Duration.ofMillis(1500)));
        AcquireOutcome o = c.acquire(key, 0, 1);
        assertThat(o).isInstanceOf(AcquireOutcome.Indeterminate.class);
        Long token = proxy.grantedToken(proxy.acquires().get(0).owner());
        assertThat(token).isNotNull();
        Wait.until("the compensating Release of token " + token + " (tokens released through the proxy)", Duration.ofSeconds(10),
                proxy::releasedTokens, released -> released.contains(token));
    }

    // 9.8 --------------------------------------------------------------------------------------

    @Test
    void timedOutAfterTheDeadlineIsStillDefinitive() throws Exception {
        Ticket held = hold(key, 60);
        // A wide response grace: the answer must arrive after D, not race D + grace on a loaded CI machine.
        LeaseholdClient c = via(proxy, b -> b.transportDeadline(Duration.ofSeconds(1)).responseGrace(Duration.ofSeconds(8)));
        c.ping();
        proxy.delayServerToClient(Duration.ofMillis(1500));
        long start = System.nanoTime();
        assertThat(c.acquire(key, 1, 5)).isInstanceOf(AcquireOutcome.TimedOut.class); // D = 1 s
        assertThat(millisSince(start)).as("T came after D").isGreaterThan(1_400L);
        start = System.nanoTime();
        assertThat(c.acquire(key, 0, 5)).isInstanceOf(AcquireOutcome.TimedOut.class); // D = 1 s
        assertThat(millisSince(start)).as("T came after D").isGreaterThan(1_400L);
        held.release();
    }

    @Test
    void busyAfterTheDeadlineIsStillDefinitive() throws Exception {
        try (TestServer small = TestServer.start(Map.of("leasehold.max-held-keys", "1"))) {
            LeaseholdClient smallDirect = client(small, ClientOptions.builder());
            AcquireOutcome first = smallDirect.acquire(key + "-a", 0, 30);
            assertThat(first).isInstanceOf(AcquireOutcome.Acquired.class);
            FaultProxy p = proxy(small);
            LeaseholdClient c = via(p, b -> b.transportDeadline(Duration.ofSeconds(1)).responseGrace(Duration.ofSeconds(8)));
            c.ping();
            p.delayServerToClient(Duration.ofMillis(1500));
            long start = System.nanoTime();
            assertThat(c.acquire(key + "-b", 0, 5)).isInstanceOf(AcquireOutcome.Busy.class);
            assertThat(millisSince(start)).isGreaterThan(1_400L);
            start = System.nanoTime();
            assertThat(c.acquire(key + "-b", 1, 5)).isInstanceOf(AcquireOutcome.Busy.class);
            assertThat(millisSince(start)).isGreaterThan(1_400L);
            ((AcquireOutcome.Acquired) first).ticket().release();
            c.close();
            smallDirect.close();
        }
    }

    @Test
    void noAnswerByDeadlinePlusGraceClosesThatSessionAndTheServerDropsTheWaiter() throws Exception {
        Ticket held = hold(key, 60);
        LeaseholdClient c = via(proxy, b -> b.poolSize(1).responseGrace(Duration.ofSeconds(1)));
        c.ping();
        // the Acquire reaches the server 4 s late with wire wait 5: the server would keep the
        // waiter until about 9 s; D + grace is 6 s (wide margins: CI machines are noisy)
        proxy.delayClientToServer(Duration.ofMillis(4000));
        proxy.swallowAnswers(true);
        long start = System.nanoTime();
        AcquireOutcome o = c.acquire(key, 5, 5);
        long elapsed = millisSince(start);
        assertThat(o).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(elapsed).isBetween(5_900L, 7_500L);
        // 2 s: the release below must still come within the dropped waiter's wait (8.5 s from the start).
        Wait.until("the client to close the unanswered session (connections through the proxy)", Duration.ofSeconds(2),
                proxy::openConnections, n -> n == 0);
        // The proxy closing its server side and the server dropping that session's waiter are two
        // steps: a release in between hands the key to the waiter (campaign run 14). The waiter
        // must leave before the time its own wait would end (the bound below).
        LockRegistry registry = server.bean(LockRegistry.class);
        Wait.until("the server to drop the closed session's waiter on " + key + " (waiters on the key)",
                Duration.ofSeconds(2), () -> registry.inspect(key.getBytes(StandardCharsets.UTF_8), 0).waiters(),
                n -> n == 0);
        // release while the dropped waiter's wait would still run: nobody may get the grant
        held.release();
        assertThat(millisSince(start)).as("released while the dropped waiter's wait would still run")
                .isLessThan(8_500L);
        AcquireOutcome now = direct.acquire(key, 0, 5);
        assertThat(now).as("the closed session's waiter was dropped").isInstanceOf(AcquireOutcome.Acquired.class);
        ((AcquireOutcome.Acquired) now).ticket().release();
    }

    @Test
    void atTheDeadlineAQueuedRequestIsNotSentAndAPartlyWrittenOneClosesItsSession() throws Exception {
        FaultProxy slow = FaultProxy.start(server.port(), 4096);
        closeables.add(slow);
        LeaseholdClient c = via(slow, b -> b.poolSize(1).responseGrace(Duration.ofSeconds(3)));
        c.ping();
        slow.stallClientToServer(true); // nothing more is read from the client: its writes block
        String longKey = key + "-" + "x".repeat(400); // with the index: under 512 bytes
        List<AcquireCall> calls = new ArrayList<>();
        java.util.concurrent.ConcurrentLinkedQueue<Long> lateness = new java.util.concurrent.ConcurrentLinkedQueue<>();
        for (int i = 0; i < 12_000; i++) { // ~6 MB: more than loopback socket buffers absorb
            AcquireCall call = c.startAcquire((longKey + i), 2, 5);
            call.result().thenRun(() -> lateness.add((System.nanoTime() - call.deadline()) / 1_000_000));
            calls.add(call);
        }
        List<Long> sentOwners = new ArrayList<>();
        List<Long> unsentOwners = new ArrayList<>();
        for (AcquireCall call : calls) {
            AcquireOutcome r = call.result().get(10, TimeUnit.SECONDS);
            if (r instanceof AcquireOutcome.Indeterminate) {
                sentOwners.add(call.owner());
            } else {
                assertThat(r).isInstanceOf(AcquireOutcome.Unavailable.class);
                unsentOwners.add(call.owner());
            }
        }
        assertThat(lateness).hasSize(calls.size());
        assertThat(lateness.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("decided at D, not D + grace (3 s)").isLessThan(1_500L);
        assertThat(sentOwners).as("the batch being written when D passed").isNotEmpty();
        assertThat(unsentOwners).as("requests still queued at D").isNotEmpty();
        slow.stallClientToServer(false); // whatever the kernel still held may reach the server now
        // that exact session was closed by the client (the proxy sees it once it reads again)
        Wait.until("the proxy to see session 1 closed by the client (open?)", Duration.ofSeconds(10), () -> slow.isOpen(1),
                open -> !open);
        assertThat(slow.acquires()).extracting(FaultProxy.SeenAcquire::owner).doesNotContainAnyElementsOf(unsentOwners);
    }

    @Test
    void noBlockingCallWaitsPastItsDeadlinePlusGrace() throws Exception {
        Ticket held = hold(key, 60);
        LeaseholdClient c = via(proxy, b -> b.poolSize(1).responseGrace(Duration.ofMillis(800))
                .transportDeadline(Duration.ofMillis(1500)));
        c.ping();
        proxy.stallServerToClient(true); // no answer ever comes back
        int[] waits = {0, 1, 2};
        long[] bounds = {1_500 + 800, 1_000 + 800, 2_000 + 800};
        List<CompletableFuture<long[]>> calls = new ArrayList<>();
        for (int i = 0; i < waits.length; i++) {
            int w = waits[i];
            calls.add(CompletableFuture.supplyAsync(() -> {
                long start = System.nanoTime();
                AcquireOutcome o = c.acquire(key, w, 5);
                return new long[] {millisSince(start), o instanceof AcquireOutcome.Indeterminate ? 1 : 0};
            }));
        }
        for (int i = 0; i < waits.length; i++) {
            long[] r = calls.get(i).get(10, TimeUnit.SECONDS);
            assertThat(r[1]).as("Indeterminate").isEqualTo(1);
            // the first call to reach D + grace closes the shared session, which ends the others
            // at once too (9.8, 9.9); none waits past its own D + grace
            assertThat(r[0]).as("wait=%d returned after %d ms", waits[i], r[0]).isLessThan(bounds[i] + 1_000);
        }
        assertThat(calls.get(1).get()[0]).as("the first to expire").isGreaterThan(1_700L);
        held.release();
    }

    @Test
    void waitZeroIsOneImmediateAttemptUnderTheTransportDeadline() throws Exception {
        Ticket held = hold(key, 60);
        proxy.acceptDelay(Duration.ofMillis(1500)); // a late connection, still inside the 3 s deadline
        LeaseholdClient c = via(proxy, b -> b.poolSize(1).transportDeadline(Duration.ofSeconds(3))
                .connectTimeout(Duration.ofMillis(2500)));
        long start = System.nanoTime();
        assertThat(c.acquire(key, 0, 5)).isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(millisSince(start)).isBetween(1_400L, 3_000L);
        assertThat(proxy.acquires()).singleElement().satisfies(a -> assertThat(a.waitSeconds()).isZero());

        // a connection later than the transport deadline: nothing is sent, Unavailable at D
        FaultProxy later = proxy(server);
        later.acceptDelay(Duration.ofMillis(2500));
        LeaseholdClient c2 = via(later, b -> b.poolSize(1).transportDeadline(Duration.ofSeconds(1))
                .connectTimeout(Duration.ofSeconds(2)));
        start = System.nanoTime();
        assertThat(c2.acquire(key, 0, 5)).isInstanceOf(AcquireOutcome.Unavailable.class);
        assertThat(millisSince(start)).isBetween(900L, 2_400L);
        // real time: the late connection (accepted at 2.5 s) must have come before we can show
        // that nothing was sent on it
        Thread.sleep(2000);
        assertThat(later.acquireStarts()).isZero();
        held.release();
    }

    @Test
    void unavailableWhenNoSessionCouldSendTheRequest() throws Exception {
        proxy.refuseConnections(true);
        LeaseholdClient c = via(proxy, b -> b.transportDeadline(Duration.ofSeconds(1)));
        long start = System.nanoTime();
        AcquireOutcome o = c.acquire(key, 2, 5);
        assertThat(o).isInstanceOf(AcquireOutcome.Unavailable.class);
        assertThat(millisSince(start)).isBetween(1_900L, 3_000L);
        start = System.nanoTime();
        assertThat(c.acquire(key, 0, 5)).isInstanceOf(AcquireOutcome.Unavailable.class);
        assertThat(millisSince(start)).isBetween(900L, 2_000L);
        assertThat(proxy.connectionsAccepted()).isZero();
        // and the client recovers when the server is reachable again
        proxy.refuseConnections(false);
        AcquireOutcome later = c.acquire(key, 5, 5);
        assertThat(later).isInstanceOf(AcquireOutcome.Acquired.class);
        ((AcquireOutcome.Acquired) later).ticket().release();
    }

    // 9.10 -------------------------------------------------------------------------------------

    @Test
    void releaseAndExtendAreRetriedOnOtherSessionsUntilAnswered() throws Exception {
        LeaseholdClient c = via(proxy, b -> b.poolSize(1).responseGrace(Duration.ofMillis(500)));
        Ticket t = ((AcquireOutcome.Acquired) c.acquire(key, 0, 30)).ticket();
        proxy.cutClientToServerAfter(4 + 10); // new sessions: the hello passes, the next request is cut
        proxy.closeAllConnections();
        CompletableFuture<ExtendOutcome> extend = t.extendAsync(40);
        Wait.until("3 connections accepted by the proxy (the Extend's retries)", Duration.ofSeconds(10), proxy::connectionsAccepted,
                n -> n >= 3);
        assertThat(extend).isNotDone();
        proxy.cutClientToServerAfter(-1);
        assertThat(extend.get(10, TimeUnit.SECONDS)).isInstanceOf(ExtendOutcome.Extended.class);
        assertThat(t.remaining()).isGreaterThan(Duration.ofSeconds(35));

        // a Release whose answer is lost is retried; the retry finds the token released already
        proxy.cutServerToClientAfter(10); // new sessions: the hello's answer passes, the next answer is cut
        proxy.closeAllConnections();
        CompletableFuture<ReleaseOutcome> release = t.releaseAsync();
        Wait.until("a Release through the proxy (tokens released)", Duration.ofSeconds(10), proxy::releasedTokens,
                released -> !released.isEmpty());
        proxy.cutServerToClientAfter(-1);
        assertThat(release.get(10, TimeUnit.SECONDS)).isIn(ReleaseOutcome.RELEASED, ReleaseOutcome.NOT_HELD);
        assertFreeSoon(key);
    }

    // pipelining ---------------------------------------------------------------------------------

    @Test
    void pipelinedAnswersAreCorrelatedOutOfOrder() throws Exception {
        Ticket held = hold(key, 60);
        LeaseholdClient c = via(proxy, b -> b.poolSize(1));
        CompletableFuture<AcquireOutcome> queued = c.acquireAsync(key, 20, 5);
        List<CompletableFuture<AcquireOutcome>> immediate = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            immediate.add(c.acquireAsync(key + "-" + i, 0, 5));
        }
        for (CompletableFuture<AcquireOutcome> f : immediate) {
            AcquireOutcome o = f.get(10, TimeUnit.SECONDS);
            assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
            ((AcquireOutcome.Acquired) o).ticket().releaseAsync();
        }
        assertThat(queued).isNotDone();
        held.release();
        AcquireOutcome o = queued.get(10, TimeUnit.SECONDS);
        assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
        assertThat(((AcquireOutcome.Acquired) o).ticket().token()).isGreaterThan(held.token());
        ((AcquireOutcome.Acquired) o).ticket().release();
        assertThat(proxy.connectionsAccepted()).isEqualTo(1);
    }

    // close --------------------------------------------------------------------------------------

    @Test
    void closeLeavesNoThreadsOrSocketsBehind() throws Exception {
        Ticket held = hold(key, 60);
        LeaseholdClient c = LeaseholdClient.create(
                ClientOptions.builder().poolSize(3).threadNamePrefix("semantics-close").build(),
                List.of(proxy.address()));
        c.ping();
        List<CompletableFuture<AcquireOutcome>> waiting = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiting.add(c.acquireAsync(key, 30, 5));
        }
        Wait.until("10 Acquires through the proxy", Duration.ofSeconds(10), proxy::acquireCount, n -> n == 10);
        assertThat(ClientMechanicsIntegrationTests.threadsNamed("semantics-close")).isNotEmpty();
        c.close();
        for (CompletableFuture<AcquireOutcome> f : waiting) {
            assertThat(f.get(2, TimeUnit.SECONDS)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        }
        // A pool thread that has just finished its last task is still alive for a moment.
        // 10 s, was 2 s: a leaked thread never ends, and one that ends may wait seconds for a loaded core.
        Wait.until("the client's semantics-close threads to end", Duration.ofSeconds(10),
                () -> ClientMechanicsIntegrationTests.threadsNamed("semantics-close"), List::isEmpty);
        Wait.until("the client's connections through the proxy to close", Duration.ofSeconds(10), proxy::openConnections,
                n -> n == 0);
        held.release();
        assertFreeSoon(key);
    }
}
