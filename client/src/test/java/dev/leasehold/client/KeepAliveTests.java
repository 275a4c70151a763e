package dev.leasehold.client;

import static dev.leasehold.client.internal.ManualTime.MS;
import static dev.leasehold.client.internal.StubWire.SECOND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.internal.ManualTime;
import dev.leasehold.client.internal.StubWire;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.support.Wait;

/**
 * {@link KeepAlive}'s rules on a manual clock with a stub session: an Extend every lease/3, LOST
 * once (NotHeld, validity ended, client closed), AT_RISK when an Extend is a period late, and
 * nothing after the owner's own release. Answers complete on the client's delivery threads and
 * then hop onto the keep-alive scheduler, so a test waits (bounded) for that hop to be queued and
 * then runs it by moving the clock by zero: no test waits for time to pass.
 */
@Timeout(20)
class KeepAliveTests {

    private static final String KEY = "orders/42";
    private static final byte[] KEY_BYTES = KEY.getBytes(StandardCharsets.UTF_8);
    private static final int LEASE = 3; // seconds: one period is 1 s

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;
    private final KeepAliveTimer keepAlives = new KeepAliveTimer("ka", time, time);
    private final List<String> events = new CopyOnWriteArrayList<>();

    private final LeaseListener listener = new LeaseListener() {
        @Override
        public void leaseLost(Ticket ticket, LossReason reason, String detail) {
            events.add("LOST " + reason + " at " + sinceStart());
        }

        @Override
        public void leaseAtRisk(Ticket ticket, Duration remaining) {
            events.add("AT_RISK at " + sinceStart() + " remaining " + remaining.toMillis() + " ms");
        }
    };

    private final long start = time.nanoTime();

    @AfterEach
    void close() {
        keepAlives.close();
        wire.close();
    }

    private long sinceStart() {
        return (time.nanoTime() - start) / MS;
    }

    /** A ticket as the server's grant would give one: valid for the whole lease, less nothing (the stub's margin is the test's business). */
    private Ticket ticket(long token) {
        long now = time.nanoTime();
        return new Ticket(wire.engine(), KEY, KEY_BYTES, token, now + LEASE * SECOND, now + LEASE * SECOND);
    }

    private KeepAlive keep(Ticket t) {
        KeepAlive k = keepAlives.keep(t, LEASE, listener);
        time.advance(0); // runs the start task: the schedule is armed
        return k;
    }

    /** Waits for an answer's hop onto the keep-alive scheduler to be queued, then runs it. */
    private void runTheAnswer() throws InterruptedException {
        // Polls real time: a delivery thread completes the future and queues the hop.
        Wait.until("the answer's hop onto the keep-alive scheduler: a task due by " + time.nanoTime()
                + " ns (seen: the due times of the tasks queued)",
                Duration.ofSeconds(10), time::pendingAt, due -> !due.isEmpty() && due.get(0) - time.nanoTime() <= 0);
        time.advance(0);
    }

    @Test
    void extendsEveryThirdOfALeaseUntilClosed() throws Exception {
        Ticket t = ticket(5);
        KeepAlive k = keep(t);
        for (int round = 1; round <= 5; round++) {
            time.advance(SECOND - 1);
            assertThat(wire.write()).as("nothing before the period ends").isEmpty();
            time.advance(1);
            assertThat(wire.write()).containsExactly(new Request.Extend(LEASE, 5, KEY_BYTES));
            wire.answer(new Answer.Extended(5));
            runTheAnswer();
        }
        assertThat(t.isValid()).as("five periods in, well past the first lease").isTrue();
        assertThat(sinceStart()).isEqualTo(5_000);
        k.close();
        time.advance(10 * SECOND);
        assertThat(wire.write()).as("closed: no Extend").isEmpty();
        assertThat(events).isEmpty();
        assertThat(k.isLost()).isFalse();
    }

    @Test
    void notHeldIsLostOnceAndThenNothingIsHeard() throws Exception {
        KeepAlive k = keep(ticket(6));
        time.advance(SECOND);
        assertThat(wire.write()).hasSize(1);
        wire.answer(new Answer.NotHeld(6));
        runTheAnswer();
        assertThat(events).containsExactly("LOST NOT_HELD at 1000");
        assertThat(k.lossReason()).contains(LossReason.NOT_HELD);
        time.advance(10 * SECOND); // past the validity: no second loss, no Extend
        assertThat(wire.write()).isEmpty();
        assertThat(events).hasSize(1);
        assertThat(time.pending()).as("every timer cancelled").isZero();
    }

    @Test
    void aSilentServerIsAtRiskAPeriodAfterTheExtendThenLostWhenTheValidityEnds() {
        KeepAlive k = keep(ticket(7));
        time.advance(SECOND);
        assertThat(wire.write()).hasSize(1); // sent, never answered
        time.advance(SECOND - 1);
        assertThat(events).isEmpty();
        time.advance(1);
        assertThat(events).containsExactly("AT_RISK at 2000 remaining 1000 ms");
        time.advance(SECOND - 1);
        assertThat(k.isLost()).isFalse();
        time.advance(1);
        assertThat(events).containsExactly("AT_RISK at 2000 remaining 1000 ms", "LOST VALIDITY_ENDED at 3000");
    }

    @Test
    void theOwnersReleaseEndsTheKeepAliveSilently() {
        Ticket t = ticket(8);
        KeepAlive k = keep(t);
        t.releaseAsync();
        assertThat(wire.write()).containsExactly(new Request.Release(8, KEY_BYTES));
        time.advance(10 * SECOND);
        assertThat(wire.write()).as("no Extend of a released ticket").isEmpty();
        assertThat(events).isEmpty();
        assertThat(k.isLost()).isFalse();
        assertThat(time.pending()).isZero();
    }

    @Test
    void closingTheClientLosesWhatItKeptAliveOnce() {
        KeepAlive k = keep(ticket(9));
        keepAlives.close();
        assertThat(events).containsExactly("LOST CLIENT_CLOSED at 0");
        assertThat(k.lossReason()).contains(LossReason.CLIENT_CLOSED);
        assertThat(time.pending()).isZero();
        keepAlives.close();
        assertThat(events).hasSize(1);
    }

    @Test
    void badArgumentsAreRejected() {
        Ticket t = ticket(10);
        assertThatIllegalArgumentException().isThrownBy(() -> keepAlives.keep(t, 0, listener));
        assertThatIllegalArgumentException().isThrownBy(() -> keepAlives.keep(t, 256, listener));
        assertThatIllegalArgumentException().isThrownBy(() -> keepAlives.keep(t, LEASE, null));
    }
}
