package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The partition checker's rules on made-up histories: each rule catches its violation, and only it. */
class ClusterHistoryTests {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private final ClusterHistory h = new ClusterHistory();

    private void grant(int node, String key, long token, long seenMs, long endMs) {
        h.sent();
        h.outcome("acquired");
        h.granted(node, seenMs * MS, token);
        h.ticket(new ClusterHistory.Ticket(key, token, node, seenMs * MS, endMs * MS));
    }

    @Test
    void aCleanHistoryPasses() {
        grant(0, "k", 1, 0, 100);
        grant(0, "k", 2, 100, 200);
        grant(1, "j", 3, 50, 150);
        assertThat(h.check()).isEmpty();
        assertThat(h.maxToken()).isEqualTo(3);
    }

    @Test
    void overlappingValidTicketsOfOneKeyAreCaught() {
        grant(0, "k", 1, 0, 100);
        grant(1, "k", 2, 99, 200);
        assertThat(h.check()).singleElement().asString().contains("valid before", "1 ms overlap");
    }

    @Test
    void aTokenTwiceOrGoingBackIsCaught() {
        grant(0, "k", 5, 0, 100);
        grant(1, "k", 5, 200, 300);
        assertThat(h.check()).anyMatch(v -> v.contains("token 5 granted twice"))
                .anyMatch(v -> v.contains("went from 5 to 5"));
    }

    private void shared(String key, long token, long seenMs, long endMs, int limit) {
        h.sent();
        h.outcome("acquired");
        h.granted(0, seenMs * MS, token);
        h.ticket(new ClusterHistory.Ticket(key, token, 0, seenMs * MS, endMs * MS, limit));
    }

    /** Readers overlap each other up to the limit, seen in any token order; writers stand alone. */
    @Test
    void aCleanReadWriteHistoryPasses() {
        shared("rw", 2, 0, 100, 2);
        shared("rw", 1, 10, 90, 2); // issued first, seen later: fine between shared tickets
        grant(0, "rw", 3, 100, 200);
        shared("rw", 4, 200, 300, 2);
        shared("rw", 5, 300, 400, 2);
        shared("r", 6, 0, 100, 0);
        shared("r", 7, 0, 100, 0);
        shared("r", 8, 0, 100, 0); // a read lock: its limit is the server's maximum
        assertThat(h.check()).isEmpty();
    }

    @Test
    void anExclusiveTicketValidWithASharedOneIsCaught() {
        shared("rw", 1, 0, 100, 0);
        grant(0, "rw", 2, 90, 200);
        assertThat(h.check()).singleElement().asString().contains("valid at once", "10 ms overlap");
    }

    @Test
    void moreSharedTicketsThanTheLimitAreCaught() {
        shared("sem", 1, 0, 100, 2);
        shared("sem", 2, 10, 100, 2);
        shared("sem", 3, 20, 30, 2);
        shared("sem", 4, 30, 100, 2); // starts as 3 ends: 2 at once
        assertThat(h.check()).singleElement().asString().isEqualTo("3 shared tickets of key sem valid at once, limit 2");
    }

    @Test
    void aTokenBelowAnEarlierExclusiveTicketOrATwoLimitKeyIsCaught() {
        grant(0, "rw", 5, 0, 100);
        shared("rw", 4, 100, 200, 3);
        shared("rw", 6, 100, 200, 2);
        assertThat(h.check()).anyMatch(v -> v.contains("went from 5 to 4"))
                .anyMatch(v -> v.contains("limits 3 and 2")).hasSize(2);
    }

    @Test
    void everyAcquireNeedsExactlyOneOutcome() {
        h.sent();
        assertThat(h.check()).singleElement().asString().contains("exactly one");
    }

    @Test
    void aGrantFromANodeCutFromBothPeersIsCaughtOnceTheAnswersInFlightHaveArrived() {
        h.isolated(new ClusterHistory.Isolation(0, 1000 * MS, 5000 * MS, "leader-cut of n1"));
        grant(0, "k", 1, 1400, 1450); // written before the cut, arriving late: fine
        grant(1, "j", 2, 2000, 2100); // the majority side: fine
        grant(0, "q", 3, 5000, 5100); // after the heal: fine
        assertThat(h.check()).isEmpty();
        grant(0, "m", 4, 1600, 1700);
        assertThat(h.check()).singleElement().asString().contains("n1 granted token 4", "600 ms into leader-cut");
    }

    @Test
    void firstX9IsPerNodeAndAfterTheFault() {
        h.x9(0, 500 * MS);
        h.x9(1, 1200 * MS);
        h.x9(0, 2600 * MS);
        h.x9(0, 2500 * MS);
        assertThat(h.firstX9(0, 1000 * MS)).isEqualTo(2500 * MS);
        assertThat(h.firstX9(2, 0)).isEqualTo(-1);
    }

    @Test
    void recordedViolationsAreReported() {
        h.violation("n2 sent X 8 on a session it had answered as leader");
        assertThat(h.check()).containsExactly("n2 sent X 8 on a session it had answered as leader");
    }
}
