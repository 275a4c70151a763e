package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.internal.AcquireCall;
import dev.leasehold.cluster.InProcessCluster;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.ErrorCode;
import dev.leasehold.protocol.RequestType;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

/**
 * The official client against a real three-node cluster (PROTOCOL.md 9.12 and 10): three nodes in
 * this JVM (real Ratis, real protocol ports, see {@link InProcessCluster}), each behind a
 * {@link FaultProxy}. Every node advertises its <em>proxy</em> as its {@code client-address}, so
 * the {@code X 8 leader=...} hints a follower sends route through a proxy the test controls and
 * counts, just like the seeds. The proxies count the frames each node really received, which is
 * how "sent once", "resent once with the same owner" and "never resent" are checked.
 *
 * <p>One cluster for the class (starting one costs seconds of two shared cores). Tests move
 * leadership with Ratis's leadership transfer, which keeps all three nodes running; the last test
 * stops two nodes, so the order is fixed. Every test asserts on its own keys and owners, never on
 * totals the others could change. Timing bounds are generous (two noisy cores); events are
 * ordered by awaiting what the proxies saw, never by sleeping.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClientClusterFaultIntegrationTests {

    private static final int NODES = 3;

    @TempDir
    static Path dir;

    private static InProcessCluster cluster;
    private static final FaultProxy[] proxies = new FaultProxy[NODES];

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private String key;

    @BeforeAll
    static void startCluster() throws Exception {
        int[] ports = new int[NODES];
        String[] advertised = new String[NODES];
        for (int i = 0; i < NODES; i++) {
            ports[i] = Ports.free();
            proxies[i] = FaultProxy.start(ports[i]); // connects to its node per accepted connection
            advertised[i] = "127.0.0.1:" + proxies[i].port();
        }
        // Election timeouts as in ClusterInProcessIntegrationTests: long enough that two busy cores do not
        // cause spurious elections in the middle of a test.
        cluster = InProcessCluster.start(dir, ports, advertised, Duration.ofMillis(1000), Duration.ofMillis(2000));
    }

    @AfterAll
    static void stopCluster() throws Exception {
        boolean failed = false;
        if (cluster != null) {
            cluster.close();
            failed = cluster.logFailed();
        }
        for (FaultProxy p : proxies) {
            if (p != null) {
                p.close();
            }
        }
        assertThat(failed).as("no node reported a failed Raft log").isFalse();
    }

    @BeforeEach
    void setUp(TestInfo info) {
        key = info.getTestMethod().orElseThrow().getName();
        for (FaultProxy p : proxies) {
            heal(p);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        for (FaultProxy p : proxies) {
            heal(p);
        }
    }

    private static void heal(FaultProxy p) {
        p.stallClientToServer(false);
        p.stallServerToClient(false);
        p.swallowAnswers(false);
        p.closeNewConnections(false);
        p.cutClientToServerAfter(-1);
        p.cutServerToClientAfter(-1);
    }

    /** {@code host:port} of node {@code i}'s proxy, as a seed (the same string its hints use). */
    private static String seed(int i) {
        return "127.0.0.1:" + proxies[i].port();
    }

    /** A client whose seed list is the proxies of {@code nodes}, in that order. */
    private LeaseholdClient client(UnaryOperator<ClientOptions.Builder> options, int... nodes) {
        String[] seeds = new String[nodes.length];
        for (int i = 0; i < nodes.length; i++) {
            seeds[i] = seed(nodes[i]);
        }
        LeaseholdClient c = LeaseholdClient.create(options.apply(ClientOptions.builder()).build(), seeds);
        closeables.add(c);
        return c;
    }

    /** The Acquire frames of {@code owner} that node {@code i} received. */
    private static List<FaultProxy.SeenAcquire> acquiresOf(int i, long owner) {
        return proxies[i].acquires().stream().filter(a -> a.owner() == owner).toList();
    }

    private static long acquiresOfKey(int i, String k) {
        return proxies[i].acquires().stream().filter(a -> a.key().equals(k)).count();
    }

    /** The error answers ({@code X}) node {@code i} sent on proxy connection {@code connection}. */
    private static List<Answer.Error> errorsOn(int i, int connection) {
        return proxies[i].answers().stream().filter(a -> a.connection() == connection)
                .map(FaultProxy.SeenAnswer::answer).filter(Answer.Error.class::isInstance).map(Answer.Error.class::cast)
                .toList();
    }

    private static boolean requested(int i, RequestType type, long token) {
        return proxies[i].requests().stream().anyMatch(r -> r.type() == type && r.tokenOrOwnerOrNonce() == token);
    }

    private static int accepted() {
        int n = 0;
        for (FaultProxy p : proxies) {
            n += p.connectionsAccepted();
        }
        return n;
    }

    private static Ticket ticket(AcquireOutcome o) {
        assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
        return ((AcquireOutcome.Acquired) o).ticket();
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    // 9.12: X 8 and the resend ----------------------------------------------------------------

    /**
     * Seeds that start with followers: the first follower answers {@code X 8} naming the leader's
     * advertised address (its proxy), and the client sends the Acquire once more, with the same
     * owner and the same deadline, to that leader, where it is granted. The follower got the
     * Acquire exactly once, the second follower never, the leader exactly once; later calls go
     * straight to the leader. A follower alone as the seed works too: the leader it names is not a
     * seed, and the client adds it.
     */
    @Test
    @Order(1)
    void aSeedListStartingWithFollowersIsGrantedByTheLeaderAfterOneResendOfTheSameOwner() throws Exception {
        int leader = cluster.awaitServingLeader(-1);
        // The first test of the class: a founder may still be forming. Each follower's X 8 must name the leader.
        cluster.awaitEveryNodeNames(leader);
        int f1 = (leader + 1) % NODES;
        int f2 = (leader + 2) % NODES;
        LeaseholdClient c = client(b -> b.poolSize(1), f1, f2, leader);

        AcquireCall call = c.startAcquire(key, 5, 5);
        Ticket t = ticket(call.result().get(15, TimeUnit.SECONDS));

        List<FaultProxy.SeenAcquire> atFollower = acquiresOf(f1, call.owner());
        assertThat(atFollower).as("the first seed, a follower, got it once").hasSize(1);
        assertThat(errorsOn(f1, atFollower.get(0).connection())).as("its answer")
                .singleElement().satisfies(x -> {
                    assertThat(x.code()).isEqualTo(ErrorCode.NOT_LEADER.code());
                    assertThat(x.message()).isEqualTo("leader=" + seed(leader));
                });
        assertThat(acquiresOf(f2, call.owner())).as("the hint was followed, not the next seed").isEmpty();
        assertThat(acquiresOf(leader, call.owner())).as("the one resend, with the same owner").singleElement()
                .satisfies(a -> {
                    assertThat(a.key()).isEqualTo(key);
                    // the same D: its wait is recomputed from the time left, never a fresh 5 s
                    assertThat(a.waitSeconds()).isBetween(1, atFollower.get(0).waitSeconds());
                });
        assertThat(proxies[leader].grantedToken(call.owner())).isEqualTo(t.token());
        assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);

        // From now on the client prefers its session to the leader: no follower sees these.
        for (int i = 0; i < 3; i++) {
            String k = key + "/" + i;
            assertThat(ticket(c.acquire(k, 0, 5)).release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(acquiresOfKey(f1, k) + acquiresOfKey(f2, k)).as("%s at a follower", k).isZero();
            assertThat(acquiresOfKey(leader, k)).isEqualTo(1);
        }

        // Only a follower as the seed: the leader named in the hint is added to the addresses.
        LeaseholdClient onlyFollower = client(b -> b.poolSize(1), f2);
        AcquireCall call2 = onlyFollower.startAcquire(key + "/only-follower", 5, 5);
        assertThat(ticket(call2.result().get(15, TimeUnit.SECONDS)).release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(acquiresOf(f2, call2.owner())).hasSize(1);
        assertThat(acquiresOf(leader, call2.owner())).hasSize(1);
        assertThat(acquiresOf(f1, call2.owner())).isEmpty();
    }

    // 9.12 with 9.9: leadership lost ----------------------------------------------------------

    /**
     * The leader steps down ({@code X 9}, here by a leadership transfer) while an Acquire is
     * possibly sent: its bytes were written to the socket (the proxy holds them, so the leader in
     * fact never read them). {@code X 9} is not {@code X 8}: the client cannot know that nothing
     * was executed, so the outcome is Indeterminate at once (not at {@code D}), and the Acquire
     * is never sent again to any node, although the client goes on working with the new leader.
     */
    @Test
    @Order(2)
    void anAcquirePossiblySentWhenTheLeaderStepsDownIsIndeterminateAndNeverResent() throws Exception {
        int leader = cluster.awaitServingLeader(-1);
        int next = (leader + 1) % NODES;
        LeaseholdClient c = client(b -> b.poolSize(1), leader, next, (leader + 2) % NODES);
        c.ping(); // the session to the leader is up
        FaultProxy lp = proxies[leader];
        long before = lp.bytesClientToServer();
        lp.stallClientToServer(true);

        long start = System.nanoTime();
        AcquireCall call = c.startAcquire(key, 10, 5);
        Wait.until("the Acquire written through the leader's proxy (bytes client to server, were " + before + ")",
                Duration.ofSeconds(10), lp::bytesClientToServer, n -> n > before);
        cluster.transferLeadership(next);
        AcquireOutcome o = call.result().get(15, TimeUnit.SECONDS);
        long ms = millisSince(start);

        assertThat(o).isInstanceOfSatisfying(AcquireOutcome.Indeterminate.class,
                i -> assertThat(i.reason()).as("closed by X 9").contains("error 9"));
        assertThat(ms).as("decided when the session ended, not at D (10 s)").isLessThan(8_000L);
        lp.stallClientToServer(false);

        // The client still reaches the new leader (via the old one's X 8) ...
        assertThat(ticket(c.acquire(key + "/after", 5, 5)).release()).isEqualTo(ReleaseOutcome.RELEASED);
        // ... but the possibly-sent Acquire never went anywhere again.
        for (int i = 0; i < NODES; i++) {
            assertThat(acquiresOf(i, call.owner())).as("node %d", i).isEmpty();
        }
    }

    /**
     * The leader granted and committed an Acquire, but its {@code A} never reached the client
     * (the proxy drops every answer), and then leadership moved. The session breaks: Indeterminate
     * at once, nothing resent. The grant nobody saw is real: the new leader promoted it (anyone
     * else gets {@code T}) and it is released by its exact token, the one the proxy saw go by. A
     * client that resent here would have asked for a second grant of a key it already held.
     */
    @Test
    @Order(3)
    void aGrantNobodySawBeforeALeadershipChangeIsIndeterminateAndKeptByTheNewLeader() throws Exception {
        int leader = cluster.awaitServingLeader(-1);
        int next = (leader + 1) % NODES;
        LeaseholdClient c = client(b -> b.poolSize(1), leader, next, (leader + 2) % NODES);
        c.ping();
        FaultProxy lp = proxies[leader];
        lp.swallowAnswers(true);

        long start = System.nanoTime();
        AcquireCall call = c.startAcquire(key, 10, 5);
        Wait.until("the leader's grant to owner " + call.owner() + " (committed)", Duration.ofSeconds(10),
                () -> lp.grantedToken(call.owner()), t -> t != null);
        long token = lp.grantedToken(call.owner());
        cluster.transferLeadership(next);
        AcquireOutcome o = call.result().get(15, TimeUnit.SECONDS);
        long ms = millisSince(start);
        lp.swallowAnswers(false);

        assertThat(o).isInstanceOf(AcquireOutcome.Indeterminate.class);
        assertThat(ms).as("decided when the session broke, not at D (10 s)").isLessThan(8_000L);
        assertThat(acquiresOf(leader, call.owner())).hasSize(1);
        for (int i = 0; i < NODES; i++) {
            if (i != leader) {
                assertThat(acquiresOf(i, call.owner())).as("node %d", i).isEmpty();
            }
        }
        LeaseholdClient probe = client(b -> b, next);
        assertThat(probe.acquire(key, 0, 5)).as("the new leader keeps the unseen grant")
                .isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(probe.release(key, token, Duration.ofSeconds(5))).as("with its exact token")
                .isEqualTo(ReleaseOutcome.RELEASED);
    }

    // 9.12 with 9.10: Release and Extend are retried on the new leader --------------------------

    /**
     * An Extend and a Release of tickets the old leader granted are in flight (written, held by
     * the proxy) when leadership moves. Both name exact tokens, so the client retries them after
     * {@code X 9}: first at the old leader, now a follower, which answers {@code X 8} naming the
     * new leader, then there, which answers them from the replicated state: Extended and Released.
     */
    @Test
    @Order(4)
    void anExtendAndAReleaseInFlightDuringALeadershipChangeAreAnsweredByTheNewLeader() throws Exception {
        int leader = cluster.awaitServingLeader(-1);
        int next = (leader + 1) % NODES;
        LeaseholdClient c = client(b -> b.poolSize(1), leader, next, (leader + 2) % NODES);
        Ticket extendMe = ticket(c.acquire(key + "/extend", 0, 20));
        Ticket releaseMe = ticket(c.acquire(key + "/release", 0, 20));
        FaultProxy lp = proxies[leader];
        int connection = lp.acquires().stream().filter(a -> a.key().equals(key + "/extend")).findFirst()
                .orElseThrow().connection();
        long before = lp.bytesClientToServer();
        lp.stallClientToServer(true);

        CompletableFuture<ExtendOutcome> extended = extendMe.extendAsync(20);
        CompletableFuture<ReleaseOutcome> released = releaseMe.releaseAsync();
        Wait.until("the Extend and Release written through the leader's proxy (bytes client to server, were " + before + ")",
                Duration.ofSeconds(10), lp::bytesClientToServer, n -> n > before);
        cluster.transferLeadership(next);
        Wait.until("the old leader to close connection " + connection + " with X 9 (open?)", Duration.ofSeconds(10),
                () -> lp.isOpen(connection), open -> !open);
        lp.stallClientToServer(false);

        assertThat(extended.get(15, TimeUnit.SECONDS)).isInstanceOf(ExtendOutcome.Extended.class);
        assertThat(released.get(15, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(errorsOn(leader, connection)).as("the old leader's session ended with X 9")
                .extracting(Answer.Error::code).containsExactly(ErrorCode.LEADERSHIP_LOST.code());
        assertThat(requested(next, RequestType.EXTEND, extendMe.token())).as("Extend answered by the new leader")
                .isTrue();
        assertThat(requested(next, RequestType.RELEASE, releaseMe.token())).as("Release answered by the new leader")
                .isTrue();

        // The extended grant is still the key's on the new leader; its holder releases it there.
        LeaseholdClient other = client(b -> b, next);
        assertThat(other.acquire(key + "/extend", 0, 5)).isInstanceOf(AcquireOutcome.TimedOut.class);
        assertThat(ticket(other.acquire(key + "/release", 0, 5)).release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(extendMe.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }

    // 9.12: bounded by D, with back-off ----------------------------------------------------------

    /**
     * No node can be reached (every proxy accepts and closes at once, so a session never comes
     * up): the Acquire is Unavailable at its deadline, never before (a node might come back) and
     * never after {@code D + grace}, and nothing was sent. Every seed was tried, with back-off
     * between rounds: a handful of connections in the 2 s, not the thousands of a hot loop.
     */
    @Test
    @Order(5)
    void withNoReachableNodeAnAcquireIsUnavailableByItsDeadlineAndTheClientBacksOff() {
        int[] acceptedBefore = new int[NODES];
        for (int i = 0; i < NODES; i++) {
            acceptedBefore[i] = proxies[i].connectionsAccepted();
            proxies[i].closeNewConnections(true);
        }
        int before = accepted();
        LeaseholdClient c = client(b -> b, 0, 1, 2); // two sessions, the default
        long start = System.nanoTime();
        AcquireOutcome o = c.acquire(key, 2, 5);
        long ms = millisSince(start);
        int connections = accepted() - before;

        assertThat(o).isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                u -> assertThat(u.reason()).contains("deadline"));
        assertThat(ms).as("at D = 2 s, within D + grace (4 s)").isBetween(1_900L, 4_000L);
        for (int i = 0; i < NODES; i++) {
            assertThat(proxies[i].connectionsAccepted()).as("seed %d was tried", i).isGreaterThan(acceptedBefore[i]);
            assertThat(acquiresOfKey(i, key)).isZero();
        }
        System.out.printf("no reachable node: %d connection attempts in %d ms%n", connections, ms);
        // 100 ms doubling to 1 s between rounds of 3 seeds, 2 slots: about 30 in 2 s
        assertThat(connections).as("back-off between rounds of seeds").isLessThanOrEqualTo(80);
    }

    /**
     * Two of three nodes stopped: no majority, so no node serves, and the one left answers
     * {@code X 8} (naming no leader, or a stopped one). The Acquire is resent after every
     * {@code X 8} while {@code D} has not passed (a leader might be elected meanwhile), always to
     * the node left and with back-off between the attempts, and ends Unavailable (nothing was
     * executed) at {@code D}, not before, and within {@code D + grace}. Runs last: it leaves the
     * cluster without a majority.
     */
    @Test
    @Order(6)
    void withoutAMajorityNothingServesAndAnAcquireIsUnavailableWithinItsDeadline() throws Exception {
        int leader = cluster.awaitServingLeader(-1);
        int f1 = (leader + 1) % NODES;
        int f2 = (leader + 2) % NODES;
        cluster.stop(f1);
        cluster.stop(f2);
        // The leader notices it lost its majority and stops serving (X 9 on its sessions).
        Wait.until("the leader (node " + leader + ") to stop serving without its majority (serving?)", Duration.ofSeconds(20),
                Duration.ofMillis(20), () -> cluster.serving(leader), serving -> !serving);

        int before = accepted();
        LeaseholdClient c = client(b -> b.poolSize(1), leader, f1, f2);
        long start = System.nanoTime();
        AcquireCall call = c.startAcquire(key, 3, 5);
        AcquireOutcome o = call.result().get(10, TimeUnit.SECONDS);
        long ms = millisSince(start);
        int connections = accepted() - before;

        assertThat(o).isInstanceOf(AcquireOutcome.Unavailable.class);
        assertThat(ms).as("within D + grace (5 s)").isLessThan(5_000L);
        assertThat(ms).as("it looks for a leader until D (3 s), not shorter").isGreaterThanOrEqualTo(2_900L);
        List<FaultProxy.SeenAcquire> seen = acquiresOf(leader, call.owner());
        // 50 ms doubling to 500 ms between no-leader rounds: about 8 in 3 s.
        assertThat(seen).as("resent after each X 8, with back-off").hasSizeBetween(2, 30);
        for (FaultProxy.SeenAcquire a : seen) {
            assertThat(errorsOn(leader, a.connection())).extracting(Answer.Error::code)
                    .containsExactly(ErrorCode.NOT_LEADER.code());
        }
        assertThat(acquiresOf(f1, call.owner())).isEmpty();
        assertThat(acquiresOf(f2, call.owner())).isEmpty();
        System.out.printf("no majority: Unavailable after %d ms (%s), %d Acquire frame(s), %d connections%n", ms,
                ((AcquireOutcome.Unavailable) o).reason(), seen.size(), connections);
        assertThat(connections).as("back-off between seeds").isLessThanOrEqualTo(80);
    }
}
