package dev.leasehold.client.internal;

import static dev.leasehold.client.internal.StubWire.GRACE;
import static dev.leasehold.client.internal.StubWire.SECOND;
import static dev.leasehold.client.internal.StubWire.TRANSPORT_DEADLINE;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;

/**
 * An Acquire's life on a manual clock with a stub session: each timing rule of PROTOCOL.md
 * section 9 at its exact instant, one nanosecond before, at, and after. The wire itself
 * (sockets, partial writes, a real server) is {@code ClientSemanticsIntegrationTests}' job.
 */
@Timeout(10) // on a manual clock nothing waits: a hang is a bug
class AcquireCallTests {

    private static final byte[] KEY = "orders/42".getBytes(StandardCharsets.UTF_8);

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;
    private final List<AcquireCall.Grant> grants = new ArrayList<>();

    @AfterEach
    void close() {
        wire.close();
    }

    private AcquireCall acquire(int waitSeconds, int leaseSeconds) {
        return wire.engine().acquire(KEY, waitSeconds, leaseSeconds, g -> {
            grants.add(g);
            return new AcquireOutcome.Acquired(null);
        });
    }

    private static AcquireOutcome outcome(AcquireCall c) {
        assertThat(c.result()).isDone();
        return c.result().join();
    }

    @Nested
    class OneDeadline { // 9.3, 9.8: a request still queued at D is not sent

        @Test
        void dIsStartPlusWait() {
            long start = time.nanoTime();
            AcquireCall c = acquire(3, 10);
            assertThat(c.deadline()).isEqualTo(start + 3 * SECOND);
            time.advance(3 * SECOND - 1);
            assertThat(c.result()).isNotDone();
            time.advance(1);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Unavailable.class);
            assertThat(wire.write()).as("not sent after D").isEmpty();
        }

        @Test
        void waitZeroHasTheTransportDeadline() {
            long start = time.nanoTime();
            AcquireCall c = acquire(0, 10);
            assertThat(c.deadline()).isEqualTo(start + TRANSPORT_DEADLINE);
            time.advance(TRANSPORT_DEADLINE - 1);
            assertThat(c.result()).isNotDone();
            time.advance(1);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Unavailable.class);
        }

        @Test
        void unavailableNamesTheLastConnectionFailure() {
            wire.setupFailure("TLS handshake failed");
            AcquireCall c = acquire(1, 10);
            time.advance(SECOND);
            assertThat(((AcquireOutcome.Unavailable) outcome(c)).reason()).contains("TLS handshake failed");
        }

        @Test
        void theTimerIsGoneOnceDecided() {
            AcquireCall c = acquire(3, 10);
            wire.write();
            assertThat(time.pending()).isEqualTo(1);
            wire.answer(new Answer.TimedOut(c.owner()));
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.TimedOut.class);
            assertThat(time.pending()).isZero();
        }
    }

    @Nested
    class WireWait { // 9.5

        private int wireWaitAfter(int waitSeconds, long elapsed) {
            AcquireCall c = acquire(waitSeconds, 10);
            time.advance(elapsed);
            List<Request> sent = wire.write();
            if (sent.isEmpty()) {
                assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Unavailable.class);
                return -1;
            }
            return ((Request.Acquire) sent.get(0)).waitSeconds();
        }

        @Test
        void isTheTimeLeftRoundedUp() {
            assertThat(wireWaitAfter(10, 0)).isEqualTo(10);
            assertThat(wireWaitAfter(10, 3 * SECOND - 1)).as("7 s + 1 ns left").isEqualTo(8);
            assertThat(wireWaitAfter(10, 3 * SECOND)).as("7 s left").isEqualTo(7);
            assertThat(wireWaitAfter(10, 3 * SECOND + 1)).as("7 s - 1 ns left").isEqualTo(7);
        }

        @Test
        void oneTickBeforeDIsOneSecondAndAtDNothingIsSent() {
            assertThat(wireWaitAfter(2, 2 * SECOND - 1)).isEqualTo(1);
            assertThat(wireWaitAfter(2, 2 * SECOND)).isEqualTo(-1);
        }

        @Test
        void waitZeroIsAlwaysSentAsZeroBeforeItsTransportDeadline() {
            assertThat(wireWaitAfter(0, 0)).isZero();
            assertThat(wireWaitAfter(0, TRANSPORT_DEADLINE - 1)).isZero();
            assertThat(wireWaitAfter(0, TRANSPORT_DEADLINE)).isEqualTo(-1);
        }

        @Test
        void theWriteCheckDecidesEvenIfTheTimerHasNotRunYet() {
            AcquireCall c = acquire(2, 10);
            // the writer reads the clock at D before the timer thread got to run
            long d = c.deadline();
            assertThat(c.beginWrite(new StubWire().new StubLink(), d)).isSameAs(Outbound.SKIP);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Unavailable.class);
        }
    }

    @Nested
    class ResponseGrace { // 9.8

        @Test
        void aSentRequestWaitsUntilDPlusGraceThenClosesItsSession() {
            AcquireCall c = acquire(3, 10);
            wire.write();
            time.advance(3 * SECOND);
            assertThat(c.result()).as("at D a written request waits").isNotDone();
            time.advance(GRACE - 1);
            assertThat(c.result()).isNotDone();
            assertThat(wire.sessionClosedByRequest()).isFalse();
            time.advance(1);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertThat(wire.sessionClosedByRequest()).as("its exact session is closed").isTrue();
        }

        @Test
        void aTAfterDIsStillDefinitive() {
            AcquireCall c = acquire(3, 10);
            wire.write();
            time.advance(3 * SECOND + GRACE - 1);
            wire.answer(new Answer.TimedOut(c.owner()));
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.TimedOut.class);
            time.advance(1);
            assertThat(wire.sessionClosedByRequest()).isFalse();
        }

        @Test
        void aBIsDefinitive() {
            AcquireCall c = acquire(3, 10);
            wire.write();
            wire.answer(new Answer.Busy(c.owner()));
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Busy.class);
        }

        @Test
        void aWriteStillUnderWayAtDClosesItsSession() {
            AcquireCall c = acquire(3, 10);
            wire.beginWrite();
            time.advance(3 * SECOND - 1);
            assertThat(c.result()).isNotDone();
            time.advance(1);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertThat(wire.sessionClosedByRequest()).isTrue();
        }

        @Test
        void theBlockingCallersBoundDecidesLikeTheTimer() {
            AcquireCall c = acquire(3, 10);
            wire.write();
            time.advance(3 * SECOND + GRACE); // the timer ran: decided, and its session closed
            assertThat(wire.sessionClosedByRequest()).isTrue();
            AcquireCall late = acquire(3, 10);
            wire.write();
            late.expireNow(); // a blocking caller whose timer thread runs late
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertThat(outcome(late)).isInstanceOf(AcquireOutcome.Indeterminate.class);
        }
    }

    @Nested
    class DeliveryGate { // 9.7

        @Test
        void aGrantIsDeliveredOnlyBeforeD() {
            AcquireCall c = acquire(3, 30);
            wire.write();
            wire.answer(new Answer.Acquired(c.owner(), 100, 0));
            AcquireOutcome granted = outcome(c);
            time.advance(3 * SECOND - 1);
            assertThat(c.deliver(granted)).isSameAs(granted);
            time.advance(1);
            assertThat(c.deliver(granted)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertCompensatingReleaseOf(100);
        }

        @Test
        void aGrantIsDeliveredOnlyBeforeValidUntil() {
            AcquireCall c = acquire(60, 1);
            long sendStart = time.nanoTime();
            wire.write();
            time.advance(500 * ManualTime.MS);
            wire.answer(new Answer.Acquired(c.owner(), 101, 400));
            AcquireOutcome granted = outcome(c);
            long validUntil = grants.get(0).validUntil();
            // 9.6: sendStart + queued_ms + lease - max(floor, 1 % of (queued + lease))
            assertThat(validUntil).isEqualTo(sendStart + 400 * ManualTime.MS + SECOND - 50 * ManualTime.MS);
            time.advanceTo(validUntil - 1);
            assertThat(c.deliver(granted)).isSameAs(granted);
            time.advance(1);
            assertThat(c.deliver(granted)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertCompensatingReleaseOf(101);
        }

        @Test
        void theMarginCoversTheWholeQueuedInterval() {
            AcquireCall c = acquire(60, 100);
            long sendStart = time.nanoTime();
            wire.write();
            wire.answer(new Answer.Acquired(c.owner(), 102, 50_000));
            // 1 % of (50 s + 100 s) = 1.5 s, not 1 % of the lease alone
            assertThat(grants.get(0).validUntil()).isEqualTo(sendStart + 150 * SECOND - 1_500 * ManualTime.MS);
        }

        @Test
        void aGrantArrivingAfterTheCallWasDecidedIsReleased() {
            AcquireCall c = acquire(3, 30);
            wire.write();
            time.advance(3 * SECOND + GRACE);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            // the session was closed for it; suppose the A was already in flight on a reader
            c.answer(new Answer.Acquired(c.owner(), 103, 0), c.session, time.nanoTime());
            assertThat(wire.sessionClosedByRequest()).isTrue();
            assertCompensatingReleaseOf(103);
        }

        @Test
        void theCompensatingReleaseIsRetriedUntilTheLeaseWouldHaveEnded() {
            AcquireCall c = acquire(3, 10);
            wire.write();
            time.advance(SECOND);
            long receivedAt = time.nanoTime();
            wire.answer(new Answer.Acquired(c.owner(), 104, 0));
            AcquireOutcome granted = outcome(c);
            time.advance(2 * SECOND);
            assertThat(c.deliver(granted)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            long bound = receivedAt + 10 * SECOND + 100 * ManualTime.MS; // lease + 1 % of it
            assertThat(grants.get(0).leaseEndUpperBound()).isEqualTo(bound);
            // every attempt's session breaks: the release keeps trying, and stops exactly at the bound
            List<Request> releases = new ArrayList<>();
            while (time.nanoTime() - bound < 0) {
                releases.addAll(wire.write());
                wire.breakSession("reset");
                time.advance(Math.min(100 * ManualTime.MS, bound - time.nanoTime() - 1 > 0
                        ? bound - time.nanoTime() - 1 : 1));
            }
            assertThat(releases).hasSizeGreaterThan(3).allSatisfy(r ->
                    assertThat(r).isEqualTo(new Request.Release(104, KEY)));
            assertThat(wire.write()).isEmpty();
            assertThat(time.pending()).isZero();
        }

        private void assertCompensatingReleaseOf(long token) {
            assertThat(wire.write()).containsExactly(new Request.Release(token, KEY));
        }
    }

    @Nested
    class SentOrNot { // 9.4, 9.9

        @Test
        void aRequestNotSentMovesOnWithItsOwnerAndDeadline() {
            AcquireCall c = acquire(10, 10);
            wire.breakSession("connect failed"); // it was only queued: nothing is lost
            time.advance(4 * SECOND);
            List<Request> sent = wire.write();
            assertThat(sent).singleElement().satisfies(r -> {
                Request.Acquire a = (Request.Acquire) r;
                assertThat(a.owner()).isEqualTo(c.owner());
                assertThat(a.waitSeconds()).isEqualTo(6);
            });
        }

        @Test
        void aSessionClosedBeforeTheWriteSendsTheRequestElsewhere() {
            AcquireCall c = acquire(10, 10);
            assertThat(wire.writeOnClosedSession()).isZero();
            assertThat(c.result()).isNotDone();
            assertThat(wire.submitted()).isEqualTo(1);
            assertThat(wire.write()).hasSize(1);
        }

        @Test
        void aBrokenSessionMakesAPossiblySentRequestIndeterminateAtOnceAndItIsNeverResent() {
            AcquireCall c = acquire(10, 10);
            wire.write();
            time.advance(SECOND);
            wire.breakSession("reset");
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertThat(wire.write()).isEmpty();
        }

        @Test
        void concludingByTheCallerIsUnavailableIfNotSentElseIndeterminate() {
            AcquireCall queued = acquire(10, 10);
            queued.conclude("cancelled");
            assertThat(outcome(queued)).isInstanceOf(AcquireOutcome.Unavailable.class);
            wire.write();
            AcquireCall sent = acquire(10, 10);
            wire.write();
            sent.conclude("cancelled");
            assertThat(outcome(sent)).isInstanceOf(AcquireOutcome.Indeterminate.class);
            assertThat(wire.sessionClosedByRequest()).as("the session stays open").isFalse();
        }
    }

    @Nested
    class NotLeader { // 9.12: X 8 means nothing was executed; resent until D, same owner and D

        @Test
        void anXEightResendsWithTheSameOwnerAndDeadline() {
            AcquireCall c = acquire(10, 10);
            wire.write();
            time.advance(3 * SECOND);
            wire.notLeader("leader=127.0.0.1:7421");
            assertThat(c.result()).as("not decided: it goes to the leader").isNotDone();
            assertThat(wire.submitted()).isEqualTo(1);
            time.advance(SECOND - 1);
            List<Request> sent = wire.write();
            assertThat(sent).singleElement().satisfies(r -> {
                Request.Acquire a = (Request.Acquire) r;
                assertThat(a.owner()).isEqualTo(c.owner());
                assertThat(a.waitSeconds()).as("ceil((D - now) / 1 s): the same D").isEqualTo(7);
            });
            wire.answer(new Answer.Acquired(c.owner(), 5, 0));
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Acquired.class);
        }

        @Test
        void everyXEightBeforeDIsResentWithTheSameOwnerAndTheSameD() {
            AcquireCall c = acquire(10, 10);
            wire.write();
            for (int i = 1; i <= 5; i++) {
                time.advance(SECOND);
                wire.notLeader(i % 2 == 0 ? "" : "leader=127.0.0.1:7421"); // an election: hints and none
                assertThat(c.result()).as("X 8 number %d, before D: still looking for the leader", i).isNotDone();
                int wait = 10 - i;
                assertThat(wire.write()).singleElement().satisfies(r -> {
                    Request.Acquire a = (Request.Acquire) r;
                    assertThat(a.owner()).isEqualTo(c.owner());
                    assertThat(a.waitSeconds()).as("ceil((D - now) / 1 s): the same D").isEqualTo(wait);
                });
            }
            wire.answer(new Answer.Acquired(c.owner(), 6, 0));
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Acquired.class);
        }

        @Test
        void anXEightOneTickBeforeDIsResentWithOneSecondOfWait() {
            AcquireCall c = acquire(5, 10);
            wire.write();
            time.advance(5 * SECOND - 1);
            wire.notLeader("leader=127.0.0.1:7421");
            assertThat(c.result()).isNotDone();
            assertThat(wire.write()).singleElement()
                    .satisfies(r -> assertThat(((Request.Acquire) r).waitSeconds()).isEqualTo(1));
        }

        @Test
        void anXEightAtDIsUnavailableAndNotResent() {
            AcquireCall c = acquire(5, 10);
            wire.write();
            time.advance(5 * SECOND); // D: it was sent, so it waits for its grace
            assertThat(c.result()).isNotDone();
            wire.notLeader("leader=127.0.0.1:7421");
            assertThat(outcome(c)).as("nothing executed and no time left to resend")
                    .isInstanceOf(AcquireOutcome.Unavailable.class);
            assertThat(wire.submitted()).isZero();
            assertThat(time.pending()).as("no timer left behind").isZero();
        }

        @Test
        void aResentRequestStillQueuedAtDIsUnavailable() {
            AcquireCall c = acquire(2, 10);
            wire.write();
            wire.notLeader(""); // no leader known: the pool backs off, the request waits
            time.advance(2 * SECOND);
            assertThat(outcome(c)).isInstanceOf(AcquireOutcome.Unavailable.class);
            assertThat(wire.write()).isEmpty();
        }
    }
}
