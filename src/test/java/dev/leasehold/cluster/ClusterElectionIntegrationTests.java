package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.ElectionOptions;
import dev.leasehold.client.LeaderListener;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Observation;
import dev.leasehold.testing.CandidateProcess;
import dev.leasehold.testing.CandidateProcess.Started;
import dev.leasehold.testing.ElectionTimeline;
import dev.leasehold.testing.FaultRun;
import dev.leasehold.testing.TermFencedStore;
import dev.leasehold.testing.support.Wait;

/**
 * An election on three real server processes, with candidates in JVMs of their own writing to a
 * {@link TermFencedStore}: a resign hands over, the <b>server</b> leader is killed ({@code kill -9})
 * while a candidate leads, the election goes on under the new server leader (a resign hands over
 * again), and a killed candidate leader is replaced when its lease ends. Across all of it no two
 * terms are valid at once by the candidates' validity, terms are in order, one identity per term
 * at the store, and the observer is told of every term. The single-node version, with a paused
 * leader, is {@code ElectionProcessesIntegrationTests} in the everyday suite.
 */
@FaultRun
class ClusterElectionIntegrationTests {

    private static final int LEASE = 3;

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;
    private final List<CandidateProcess> candidates = new ArrayList<>();
    private TermFencedStore store;

    @AfterEach
    void stop() {
        candidates.forEach(CandidateProcess::close);
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.closeAll();
        }
    }

    @Test
    void theElectionGoesOnAcrossAServerLeaderKillWithNoTwoTermsValidAtOnce() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        for (int i = 0; i < 3; i++) {
            cluster.launch(i, cluster.props(i, "WARN", Map.of()));
        }
        for (int i = 0; i < 3; i++) {
            cluster.awaitLog(i, "Leasehold protocol listening", 120_000);
        }
        cluster.awaitEveryMemberStored(120_000); // the leader dies below: the other two must be able to elect
        int serverLeader = cluster.servingLeader(60_000, -1);
        String servers = java.util.Arrays.stream(cluster.clientPorts).mapToObj(p -> "127.0.0.1:" + p)
                .collect(Collectors.joining(","));
        List<InetSocketAddress> seeds = new ArrayList<>();
        for (int port : cluster.clientPorts) {
            seeds.add(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        }
        store = TermFencedStore.start();
        List<String> observed = new CopyOnWriteArrayList<>();
        try (LeaseholdClient watcher = LeaseholdClient.create(ClientOptions.builder().build(), seeds);
                Observation observer = watcher.election("billing/leader", "observer", ElectionOptions.defaults())
                        .observe(new LeaderListener() {
                            @Override
                            public void onNewLeader(long term, String identity) {
                                observed.add(term + " " + identity);
                            }
                        })) {
            for (String id : List.of("a", "b", "c")) {
                candidates.add(CandidateProcess.launch(servers, "billing/leader", id, LEASE, store));
            }
            candidates.forEach(c -> c.await("READY", Duration.ofSeconds(60)));
            Started first = CandidateProcess.termAbove(candidates, 0, Duration.ofSeconds(60));

            first.candidate().send("RESIGN");
            Started second = CandidateProcess.termAbove(candidates, first.term(), Duration.ofSeconds(20));

            long killedAt = System.nanoTime();
            cluster.nodes[serverLeader].kill9();
            int newServerLeader = cluster.servingLeader(60_000, -1);
            long failoverMillis = (System.nanoTime() - killedAt) / 1_000_000;
            // The candidate leader keeps its term if its Extends reach the new server leader in time,
            // else its term ends (LEASE_LOST) before its validity and the next candidate leads: both are fine.
            Started current = latest(second, Duration.ofSeconds(LEASE + 30));
            current.candidate().send("RESIGN");
            Started afterFailover = CandidateProcess.termAbove(candidates, current.term(), Duration.ofSeconds(30));

            long crashAt = System.nanoTime();
            afterFailover.candidate().kill9();
            Started afterCrash = CandidateProcess.termAbove(candidates, afterFailover.term(), Duration.ofSeconds(LEASE + 30));
            long crashMillis = (afterCrash.nanos() - crashAt) / 1_000_000;

            for (CandidateProcess c : candidates) {
                if (c.isAlive()) {
                    c.send("CLOSE");
                }
            }
            for (CandidateProcess c : candidates) {
                Wait.until(c + " to exit after CLOSE", Duration.ofSeconds(30), () -> c.isAlive(), alive -> !alive);
            }
            ElectionTimeline timeline = ElectionTimeline.of(candidates);
            System.out.println("cluster election (lease " + LEASE + " s): server leader n" + (serverLeader + 1)
                    + " killed, n" + (newServerLeader + 1) + " serving after " + failoverMillis
                    + " ms; candidate leader killed -> next term " + crashMillis + " ms; store " + store + ", stale writes accepted "
                    + store.staleAccepted(timeline) + "\n" + timeline);
            assertThat(timeline.violations()).as(timeline.toString()).isEmpty();
            assertThat(store.problems()).isEmpty();
            assertThat(store.staleAccepted(timeline)).as("writes accepted after a later term began").isZero();
            assertThat(timeline.terms()).extracting(ElectionTimeline.Term::term)
                    .contains(first.term(), second.term(), afterFailover.term(), afterCrash.term());
            Wait.untilAsserted("the observer to be told of every term", Duration.ofSeconds(30), () -> {
                for (ElectionTimeline.Term t : timeline.terms()) {
                    assertThat(observed).contains(t.term() + " " + t.identity());
                }
            });
        }
    }

    /** The highest term started so far, at least {@code atLeast}'s, once it has been leading a moment. */
    private Started latest(Started atLeast, Duration within) throws InterruptedException {
        Started s = atLeast;
        long giveUp = System.nanoTime() + within.toNanos();
        while (System.nanoTime() - giveUp < 0) {
            try {
                s = CandidateProcess.termAbove(candidates, s.term(), Duration.ofMillis(500));
            } catch (AssertionError none) {
                return s; // nothing newer for half a second: s leads (or its term ends and the next shows up later)
            }
        }
        return s;
    }
}
