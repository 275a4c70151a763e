package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Leader election ({@link Election}, docs/election.md) over a real server and real sockets: three
 * candidates and an observer on one node. Graceful handovers (resign → the next candidate's
 * {@code onStartedLeading}, the observer told each term), a leader cut off from the server (its
 * {@link FaultProxy} closes every connection and refuses new ones: a crashed client, as the server
 * sees it, that still runs, so its own end of term can be checked against the next start), and
 * stop = resign or withdraw with proof. Every run checks, on this JVM's one monotonic clock, that
 * no term started while an earlier one was still valid at its candidate, and that terms strictly
 * increase.
 */
class ElectionIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    @RegisterExtension
    final ClientFixture fx = new ClientFixture(server, "election/");

    /** Every term of every candidate of a test, and the overlaps seen when each began. */
    static final class Terms {
        final List<Leadership> all = new CopyOnWriteArrayList<>();
        final List<String> overlaps = new CopyOnWriteArrayList<>();
        final BlockingQueue<Leadership> started = new LinkedBlockingQueue<>();
        final BlockingQueue<String> stopped = new LinkedBlockingQueue<>();

        CampaignListener candidate(String name) {
            return new CampaignListener() {
                @Override
                public void onStartedLeading(Leadership l) {
                    for (Leadership earlier : all) {
                        if (earlier.isValid()) {
                            overlaps.add(earlier + " still valid when " + l + " started");
                        }
                    }
                    all.add(l);
                    started.add(l);
                }

                @Override
                public void onStoppedLeading(Leadership l, StopReason reason) {
                    assertThat(l.isValid()).as("not valid when told it stopped").isFalse();
                    stopped.add(name + ":" + l.term() + ":" + reason);
                }
            };
        }

        Leadership nextStart() throws InterruptedException {
            Leadership l = started.poll(15, TimeUnit.SECONDS);
            assertThat(l).as("a candidate started leading within 15 s").isNotNull();
            return l;
        }
    }

    /** What an observer heard: "term identity" per new leader, "none", "unknown". */
    static final class Observer implements LeaderListener {
        final BlockingQueue<String> heard = new LinkedBlockingQueue<>();

        @Override
        public void onNewLeader(long term, String identity) {
            heard.add(term + " " + identity);
        }

        @Override
        public void onNoLeader() {
            heard.add("none");
        }

        @Override
        public void onLeaderUnknown(String reason) {
            heard.add("unknown");
        }

        String next() throws InterruptedException {
            String s = heard.poll(15, TimeUnit.SECONDS);
            assertThat(s).as("the observer heard something within 15 s").isNotNull();
            return s;
        }
    }

    private Campaign candidate(String identity, ElectionOptions options, Terms terms) {
        LeaseholdClient c = fx.client(ClientOptions.builder(), fx.proxy().address());
        return fx.closeLater(c.election(fx.key(), identity, options).campaign(terms.candidate(identity)));
    }

    /** Waits until {@code proxy} has passed {@code n} acquires ({@code M}) to the server. */
    private static void queued(FaultProxy proxy, int n) {
        Wait.until(n + " acquires to pass the proxy", Duration.ofSeconds(10),
                () -> proxy.requests().stream().filter(r -> r.type().op() == 'M').count(), count -> count >= n);
    }

    @Test
    void gracefulHandoversGoDownTheQueueAndTheObserverHearsEachTerm() throws Exception {
        Observer observer = new Observer();
        Election watching = fx.direct().election(fx.key(), "observer", ElectionOptions.defaults());
        fx.closeLater(watching.observe(observer));
        assertThat(observer.next()).isEqualTo("none");

        Terms terms = new Terms();
        ElectionOptions options = ElectionOptions.defaults().withLeaseSeconds(5);
        for (String id : List.of("a", "b", "c")) {
            candidate(id, options, terms);
        }
        queued(fx.proxy(), 3);
        List<Long> handoverMicros = new ArrayList<>();
        long previousTerm = 0;
        Leadership leader = terms.nextStart();
        for (int i = 0; i < 30; i++) {
            assertThat(leader.term()).as("terms strictly increase").isGreaterThan(previousTerm);
            assertThat(observer.next()).isEqualTo(leader.term() + " " + leader.identity());
            assertThat(watching.leader()).contains(new Leader(leader.term(), leader.identity()));
            previousTerm = leader.term();
            long resignedAt = System.nanoTime();
            assertThat(leader.resign().get(5, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
            Leadership next = terms.nextStart();
            handoverMicros.add((System.nanoTime() - resignedAt) / 1000);
            assertThat(next.identity()).as("the next in the queue, not the resigner").isNotEqualTo(leader.identity());
            leader = next;
        }
        assertThat(terms.overlaps).isEmpty();
        assertThat(terms.stopped).hasSize(30).allMatch(s -> s.endsWith(":RESIGNED"));
        Collections.sort(handoverMicros);
        System.out.println("election handover resign->next onStartedLeading over 30 (us): p50="
                + handoverMicros.get(15) + " max=" + handoverMicros.get(29));
    }

    @Test
    void aLeaderCutOffFromTheServerStopsBeforeTheNextTermStarts() throws Exception {
        Terms terms = new Terms();
        ElectionOptions options = ElectionOptions.defaults().withLeaseSeconds(2);
        List<FaultProxy> proxies = new ArrayList<>();
        List<Campaign> campaigns = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            FaultProxy p = fx.closeLater(FaultProxy.start(server.port()));
            proxies.add(p);
            LeaseholdClient c = fx.client(ClientOptions.builder(), p.address());
            campaigns.add(fx.closeLater(c.election(fx.key(), id, options).campaign(terms.candidate(id))));
        }
        Observer observer = new Observer();
        fx.closeLater(fx.direct().election(fx.key(), "observer", options).observe(observer));

        Leadership first = terms.nextStart();
        FaultProxy crashed = proxies.get(List.of("a", "b", "c").indexOf(first.identity()));
        long cutAt = System.nanoTime();
        crashed.refuseConnections(true); // as the server sees it, this client is gone
        crashed.closeAllConnections();

        Leadership second = terms.nextStart();
        long tookMillis = (System.nanoTime() - cutAt) / 1_000_000;
        assertThat(second.term()).isGreaterThan(first.term());
        assertThat(second.identity()).isNotEqualTo(first.identity());
        assertThat(first.stopReason()).as("the cut-off leader had stopped by then").isEqualTo(StopReason.LEASE_LOST);
        assertThat(terms.stopped.poll(5, TimeUnit.SECONDS)).isEqualTo(first.identity() + ":" + first.term()
                + ":LEASE_LOST");
        assertThat(terms.overlaps).isEmpty();
        assertThat(tookMillis).as("the next term within the lease plus 3 s").isLessThan(5_000);
        System.out.println("election crash handover (leader cut off, lease 2 s): " + tookMillis + " ms");

        // The observer hears both terms, in order (perhaps with a gap or "none" between).
        List<String> seen = new ArrayList<>();
        while (!seen.contains(second.term() + " " + second.identity())) {
            seen.add(observer.next());
        }
        assertThat(seen).contains(first.term() + " " + first.identity());
        assertThat(campaigns).hasSize(3);
    }

    @Test
    void aLeaderWhoseClientClosesResignsAndIsReplacedAtOnce() throws Exception {
        Terms terms = new Terms();
        ElectionOptions options = ElectionOptions.defaults().withLeaseSeconds(30);
        List<LeaseholdClient> clients = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            LeaseholdClient c = fx.client(ClientOptions.builder(), fx.proxy().address());
            clients.add(c);
            fx.closeLater(c.election(fx.key(), id, options).campaign(terms.candidate(id)));
        }
        Leadership first = terms.nextStart();
        long closedAt = System.nanoTime();
        clients.get(List.of("a", "b", "c").indexOf(first.identity())).close(); // resigns its campaign first
        assertThat(terms.stopped.poll(5, TimeUnit.SECONDS)).isEqualTo(first.identity() + ":" + first.term()
                + ":CLOSED");
        Leadership second = terms.nextStart();
        long tookMillis = (System.nanoTime() - closedAt) / 1_000_000;
        assertThat(second.term()).isGreaterThan(first.term());
        assertThat(terms.overlaps).isEmpty();
        // Released, not expired: a 30 s lease that ran out would take 30 s; the bound is generous for CI.
        assertThat(tookMillis).as("a handover by the close's release, far inside the 30 s lease").isLessThan(10_000L);
        System.out.println("election handover after the leader's client closed (lease 30 s): " + tookMillis + " ms");
    }

    @Test
    void stopWithdrawsAQueuedCandidateAndResignsALeaderWithProof() throws Exception {
        Terms terms = new Terms();
        ElectionOptions options = ElectionOptions.defaults().withLeaseSeconds(10);
        Campaign a = candidate("a", options, terms);
        Leadership leader = terms.nextStart();
        Campaign b = candidate("b", options, terms);
        queued(fx.proxy(), 2); // b's M was sent: its W follows it on the same session
        assertThat(leader.proclaim("a at 10.0.0.1")).isEqualTo(new ProclaimOutcome.Proclaimed());

        CampaignEnd bEnd = b.stop();
        assertThat(bEnd).isInstanceOfSatisfying(CampaignEnd.Withdrawn.class,
                w -> assertThat(w.outcome()).isInstanceOf(AcquireOutcome.Cancelled.class));
        CampaignEnd aEnd = a.stop();
        assertThat(aEnd).isEqualTo(new CampaignEnd.Resigned(leader.term(), ReleaseOutcome.RELEASED));
        assertThat(terms.stopped.poll(5, TimeUnit.SECONDS)).isEqualTo("a:" + leader.term() + ":CLOSED");
        assertThat(leader.isValid()).isFalse();
        assertThat(a.stop()).as("idempotent").isEqualTo(aEnd);

        Ticket probe = ClientFixture.ticket(fx.direct().acquire(fx.key(), Duration.ZERO, 5));
        assertThat(probe.token()).as("nobody holds or waits: the key is free at once").isGreaterThan(leader.term());
        assertThat(terms.started.poll(300, TimeUnit.MILLISECONDS)).as("no term after stop").isNull();
        probe.release();
    }
}
