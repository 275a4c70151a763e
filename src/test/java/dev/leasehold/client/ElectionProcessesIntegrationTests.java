package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.testing.CandidateProcess;
import dev.leasehold.testing.CandidateProcess.Started;
import dev.leasehold.testing.ElectionTimeline;
import dev.leasehold.testing.TermFencedStore;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * Promise 1 of docs/election.md where only processes can show it: candidates in JVMs of their own
 * ({@link CandidateProcess}), each writing to a {@link TermFencedStore} with its term while it
 * leads, on one server. A leader is killed ({@code kill -9}: its term ends with its lease on the
 * server), paused past its lease ({@code SIGSTOP}: the next term starts while it sleeps, and its
 * writes on waking are refused by the store), and resigns. Across all of it: no two terms valid at
 * once by the candidates' own validity (one machine, one monotonic clock), terms in order, one
 * leader per term at the store, and an observer told of every term.
 */
class ElectionProcessesIntegrationTests {

    private static final int LEASE = 2;

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    private final List<CandidateProcess> candidates = new ArrayList<>();
    private TermFencedStore store;

    @AfterEach
    void stopAll() {
        candidates.forEach(CandidateProcess::close);
        if (store != null) {
            store.close();
        }
    }

    private Started leaderAbove(long after, Duration within) {
        return CandidateProcess.termAbove(candidates, after, within);
    }

    /** Waits until the store accepted a write of {@code term}: its leader is at work. */
    private void awaitWriteOf(long term) {
        Wait.until("term " + term + "'s first write", Duration.ofSeconds(10), () -> store.acceptedPerTerm(),
                accepted -> accepted.containsKey(term));
    }

    private CandidateProcess launch(String key, String identity) throws IOException {
        CandidateProcess c = CandidateProcess.launch("127.0.0.1:" + server.port(), key, identity, LEASE, store);
        candidates.add(c);
        return c;
    }

    @Test
    void aKilledAPausedAndAResigningLeaderNeverLeaveTwoTermsValidAtOnce() throws Exception {
        store = TermFencedStore.start();
        String key = "election-processes/" + UUID.randomUUID();
        List<String> observed = new CopyOnWriteArrayList<>();
        Observation observer = server.client().election(key, "observer", ElectionOptions.defaults())
                .observe(new LeaderListener() {
                    @Override
                    public void onNewLeader(long term, String identity) {
                        observed.add(term + " " + identity);
                    }
                });
        try {
            for (String id : List.of("a", "b", "c")) {
                launch(key, id);
            }
            // JVM starts on a loaded 2-core CI machine take seconds; 60 s only bounds a hang.
            candidates.forEach(c -> c.await("READY", Duration.ofSeconds(60)));
            Started first = leaderAbove(0, Duration.ofSeconds(30));

            // kill -9 of a leader at work: nothing is released, the term ends with its lease on the server
            awaitWriteOf(first.term());
            long killedAt = System.nanoTime();
            first.candidate().kill9();
            Started second = leaderAbove(first.term(), Duration.ofSeconds(LEASE + 10));
            long crashMillis = (second.nanos() - killedAt) / 1_000_000;
            assertThat(second.candidate()).isNotSameAs(first.candidate());
            launch(key, "d").await("READY", Duration.ofSeconds(60));

            // SIGSTOP past the lease: the next term starts while the leader sleeps; on waking it stops
            second.candidate().signal("STOP");
            Started third;
            try {
                third = leaderAbove(second.term(), Duration.ofSeconds(LEASE + 10));
                // It wakes once the new leader is at work: the store has seen the new term and
                // refuses the sleeper's stale write (a write that beats the new leader's first one
                // is what no fence can catch; staleAccepted below counts it).
                awaitWriteOf(third.term());
            } finally {
                second.candidate().signal("CONT");
            }
            second.candidate().await("STOP " + second.term() + " ", Duration.ofSeconds(20));
            second.candidate().await("WROTE " + second.term() + " ", Duration.ofSeconds(20));

            // resign: the next candidate leads one round trip later
            long resignAt = System.nanoTime();
            third.candidate().send("RESIGN");
            Started fourth = leaderAbove(third.term(), Duration.ofSeconds(10));
            long resignMillis = (fourth.nanos() - resignAt) / 1_000_000;

            for (CandidateProcess c : candidates) {
                if (c.isAlive()) {
                    c.send("CLOSE");
                }
            }
            for (CandidateProcess c : candidates) {
                Wait.until(c + " to exit after CLOSE", Duration.ofSeconds(30), () -> c.isAlive(), alive -> !alive);
            }

            ElectionTimeline timeline = ElectionTimeline.of(candidates);
            System.out.println("election processes (lease " + LEASE + " s): kill -9 -> next term " + crashMillis
                    + " ms, resign -> next term " + resignMillis + " ms; store " + store + ", stale writes accepted "
                    + store.staleAccepted(timeline) + "\n" + timeline);
            assertThat(timeline.violations()).as(timeline.toString()).isEmpty();
            assertThat(timeline.terms()).extracting(ElectionTimeline.Term::term)
                    .contains(first.term(), second.term(), third.term(), fourth.term());
            assertThat(store.problems()).isEmpty();
            assertThat(store.staleAccepted(timeline)).as("writes accepted after a later term began").isZero();
            assertThat(store.acceptedPerTerm()).containsKeys(first.term(), third.term());
            assertThat(crashMillis).as("a killed leader is replaced when its lease ends, not before")
                    .isGreaterThanOrEqualTo(LEASE * 1000L * 2 / 3 - 300) // its last Extend came at most lease/3 before
                    .isLessThan(LEASE * 1000L + 8000);
            Wait.untilAsserted("the observer to be told of every term", Duration.ofSeconds(10), () -> {
                for (ElectionTimeline.Term t : timeline.terms()) {
                    assertThat(observed).contains(t.term() + " " + t.identity());
                }
            });
        } finally {
            observer.close();
        }
    }
}
