package dev.leasehold.client;

import static dev.leasehold.client.internal.ManualTime.MS;
import static dev.leasehold.client.internal.StubWire.SECOND;
import static org.assertj.core.api.Assertions.assertThat;

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
 * A {@link Campaign}'s rules on a manual clock with a stub session: it queues an {@code M} carrying
 * its identity, a grant starts a term (once) and its keep-alive, a keep-alive that gets no answer
 * ends the term at the validity minus the safety, never later, and reports it before the release
 * is sent; a {@code T} queues again at once. Listener calls run on the client's delivery threads,
 * so a test waits (bounded, real time) for them; no test waits for client time to pass.
 */
@Timeout(20)
class CampaignTests {

    private static final String KEY = "e/leader";
    private static final int LEASE = 3; // seconds

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;
    private final KeepAliveTimer keepAlives = new KeepAliveTimer("ka", time, time);
    private final List<String> heard = new CopyOnWriteArrayList<>();
    private final List<Leadership> terms = new CopyOnWriteArrayList<>();
    private final long start = time.nanoTime();

    private final CampaignListener listener = new CampaignListener() {
        @Override
        public void onStartedLeading(Leadership l) {
            terms.add(l);
            heard.add("started " + l.term() + " at " + sinceStart());
        }

        @Override
        public void onStoppedLeading(Leadership l, StopReason reason) {
            heard.add("stopped " + l.term() + " " + reason + " at " + sinceStart() + (l.isValid() ? " valid" : ""));
        }

        @Override
        public void onAttemptFailed(AcquireOutcome outcome) {
            heard.add("failed " + outcome.getClass().getSimpleName() + " at " + sinceStart());
        }
    };

    @AfterEach
    void close() {
        // The wire first: the stub answers nothing, so campaigns stopped on an open wire would wait
        // out their proof bound in real time; on a closed one they end at once.
        wire.close();
        keepAlives.close();
    }

    private long sinceStart() {
        return (time.nanoTime() - start) / MS;
    }

    private Campaign campaign() {
        wire.speak14Everywhere(255_000, 256);
        ElectionOptions options = ElectionOptions.defaults().withLeaseSeconds(LEASE)
                .withCampaignWait(Duration.ofSeconds(60));
        return new Election(wire.engine(), keepAlives, KEY, "node-a", options).campaign(listener);
    }

    /** The one {@code M} written now (the observation's {@code O} beside it is left unanswered). */
    private Request.MilliAcquire queuedAcquire() {
        List<Request> written = wire.write();
        List<Request.MilliAcquire> m = written.stream().filter(Request.MilliAcquire.class::isInstance)
                .map(Request.MilliAcquire.class::cast).toList();
        assertThat(m).as("written: " + written).hasSize(1);
        return m.get(0);
    }

    private void awaitHeard(int n) {
        Wait.until("the listener's calls", Duration.ofSeconds(10), () -> List.copyOf(heard), h -> h.size() >= n);
    }

    @Test
    void queuesItsIdentityAndAGrantStartsOneTerm() {
        Campaign c = campaign();
        Request.MilliAcquire m = queuedAcquire();
        assertThat(new String(m.value(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("node-a");
        assertThat(m.waitMillis()).isEqualTo(60_000);
        assertThat(m.leaseSeconds()).isEqualTo(LEASE);
        wire.answer(new Answer.Acquired(m.owner(), 42, 0));
        awaitHeard(1);
        assertThat(heard).containsExactly("started 42 at 0");
        assertThat(c.leadership()).hasValueSatisfying(l -> {
            assertThat(l.term()).isEqualTo(42);
            assertThat(l.identity()).isEqualTo("node-a");
            assertThat(l.isValid()).isTrue();
        });
    }

    @Test
    void aTimedOutWaitQueuesAgainAtOnce() {
        campaign();
        Request.MilliAcquire first = queuedAcquire();
        wire.answer(new Answer.TimedOut(first.owner()));
        Wait.until("the next M", Duration.ofSeconds(10), () -> wire.write().stream()
                .filter(Request.MilliAcquire.class::isInstance).count(), n -> n == 1);
        assertThat(heard).isEmpty();
    }

    @Test
    void aKeepAliveWithoutAnswersEndsTheTermAtValidityMinusSafetyBeforeTheRelease() {
        campaign();
        Request.MilliAcquire m = queuedAcquire();
        wire.answer(new Answer.Acquired(m.owner(), 7, 0));
        awaitHeard(1);
        Leadership l = terms.get(0);
        // validUntil = send + lease - margin (50 ms floor) = 2950 ms; minus the safety (300 ms) = 2650 ms.
        assertThat((l.validUntilNanos() - start) / MS).isEqualTo(2650);
        time.advance(0); // the keep-alive's start task
        time.advance(SECOND);
        assertThat(wire.write()).as("the first Extend, left unanswered").singleElement()
                .isInstanceOf(Request.Extend.class);
        time.advance(1649 * MS);
        assertThat(heard).hasSize(1);
        assertThat(l.isValid()).isTrue();
        time.advance(1 * MS);
        assertThat(l.isValid()).as("over at 2650 ms, on this side").isFalse();
        awaitHeard(2);
        assertThat(heard.get(1)).isEqualTo("stopped 7 LEASE_LOST at 2650");
        Wait.until("the release after the listener heard the end", Duration.ofSeconds(10),
                () -> wire.write(), w -> w.stream().anyMatch(Request.Release.class::isInstance));
    }

    @Test
    void aFailedAttemptIsToldToTheListenerAndTriedAgainAfterTheBackOff() {
        campaign();
        Request.MilliAcquire first = queuedAcquire();
        wire.answer(new Answer.Busy(first.owner()));
        awaitHeard(1);
        assertThat(heard).containsExactly("failed Busy at 0");
        assertThat(wire.write()).as("nothing before the back-off").noneMatch(Request.MilliAcquire.class::isInstance);
        time.advance(100 * MS); // the first back-off is at most 100 ms (50 to 100, jittered)
        assertThat(wire.write()).as("tried again").filteredOn(Request.MilliAcquire.class::isInstance).hasSize(1);
    }

    @Test
    void stopFromTheCampaignsOwnListenerThrowsAndStopAsyncThereWorks() {
        java.util.concurrent.atomic.AtomicReference<Object> fromListener = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Campaign> self = new java.util.concurrent.atomic.AtomicReference<>();
        wire.speak14Everywhere(255_000, 256);
        Campaign c = new Election(wire.engine(), keepAlives, KEY, "node-a",
                ElectionOptions.defaults().withLeaseSeconds(LEASE)).campaign(new CampaignListener() {
                    @Override
                    public void onStartedLeading(Leadership l) {
                        try {
                            self.get().stop();
                            fromListener.set("returned");
                        } catch (IllegalStateException e) {
                            fromListener.set(e);
                            self.get().stopAsync();
                        }
                    }

                    @Override
                    public void onStoppedLeading(Leadership l, StopReason reason) {
                        heard.add("stopped " + reason);
                    }
                });
        self.set(c);
        Request.MilliAcquire m = queuedAcquire();
        wire.answer(new Answer.Acquired(m.owner(), 9, 0));
        awaitHeard(1);
        assertThat(fromListener.get()).isInstanceOf(IllegalStateException.class);
        assertThat(heard).containsExactly("stopped CLOSED");
        Wait.until("the resign's Release", Duration.ofSeconds(10), () -> wire.write(),
                w -> w.stream().anyMatch(Request.Release.class::isInstance));
    }
}
