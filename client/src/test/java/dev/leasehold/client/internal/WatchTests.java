package dev.leasehold.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ObservationListener;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;

/**
 * An observation's mechanics on the manual clock with a stub session (PROTOCOL.md 9.15): events in
 * order, unknown once with the resubscription's back-off, the token guard across subscriptions,
 * the one-slot mailbox of a slow listener, and {@code U} on close. The listener runs on delivery
 * threads, so the tests wait for what it heard (bounded), never for time to pass.
 */
@Timeout(20)
class WatchTests {

    private static final String KEY = "lead";
    private static final byte[] KEY_BYTES = KEY.getBytes(StandardCharsets.UTF_8);
    private static final long MS = ManualTime.MS;

    private final StubWire wire = new StubWire();
    private final ManualTime time = wire.time;
    private final BlockingQueue<Object> heard = new LinkedBlockingQueue<>();
    private final Watch.Listener recorder = new Watch.Listener() {
        @Override
        public void event(Watch.Seen event) {
            heard.add(event);
        }

        @Override
        public void unknown(String reason) {
            heard.add("unknown");
        }
    };

    @AfterEach
    void close() {
        wire.close();
    }

    /** The watch id of the one {@code O} written now. */
    private long subscribed() {
        List<Request> written = wire.write();
        assertThat(written).singleElement().isInstanceOf(Request.Observe.class);
        return ((Request.Observe) written.get(0)).watch();
    }

    private static Answer.Event event(long watch, char state, int cause, long token, String value) {
        return new Answer.Event(watch, state, cause, 0, token, state == 'H' ? 1 : 0, 0,
                value.getBytes(StandardCharsets.UTF_8));
    }

    private Object next() throws InterruptedException {
        Object o = heard.poll(10, TimeUnit.SECONDS);
        assertThat(o).as("the listener heard something").isNotNull();
        return o;
    }

    @Test
    void eventsInOrderThenUnknownOnceThenTheNewSubscriptionsFirstEvent() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Watch w = wire.engine().observe(KEY, KEY_BYTES, recorder);
        long first = subscribed();
        wire.answer(event(first, 'F', 0, 0, ""));
        Watch.Seen free0 = (Watch.Seen) next();
        assertThat(free0.state()).isEqualTo('F');
        assertThat(free0.cause()).isZero();
        assertThat(free0.coalesced()).isFalse();
        assertThat(free0.token()).isZero();
        wire.answer(event(first, 'H', 1, 1042, "n1")); // after the first was heard: not coalesced with it
        Watch.Seen held = (Watch.Seen) next();
        assertThat(new String(held.value(), StandardCharsets.UTF_8)).isEqualTo("n1");
        assertThat(held.coalesced()).isFalse();

        wire.breakSession("connection reset");
        assertThat(next()).isEqualTo("unknown");
        time.advance(50 * MS - 1);
        assertThat(wire.write()).as("not before 50 ms").isEmpty();
        time.advance(1);
        long second = subscribed();
        assertThat(second).as("a fresh watch id").isNotEqualTo(first);
        wire.breakSession("connection reset again");
        time.advance(100 * MS); // doubled
        long third = subscribed();
        // The new leader knows less: F with token 0 is shown with the highest delivered; H below it is stale.
        wire.answer(event(third, 'H', 0, 1000, "old"));
        wire.answer(event(third, 'F', 0, 0, ""));
        Watch.Seen free = (Watch.Seen) next();
        assertThat(free.state()).isEqualTo('F');
        assertThat(free.token()).as("never back").isEqualTo(1042);
        assertThat(heard.poll(200, TimeUnit.MILLISECONDS)).as("one unknown per gap, the stale H dropped").isNull();
        w.close();
    }

    @Test
    void aSlowListenerGetsTheNewestEventMarkedCoalesced() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        CountDownLatch inFirst = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Watch.Seen> events = new ArrayList<>();
        Watch.Listener slow = new Watch.Listener() {
            @Override
            public void event(Watch.Seen event) {
                synchronized (events) {
                    events.add(event);
                }
                inFirst.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                heard.add(event);
            }

            @Override
            public void unknown(String reason) {
                heard.add("unknown");
            }
        };
        Watch w = wire.engine().observe(KEY, KEY_BYTES, slow);
        long watch = subscribed();
        wire.answer(event(watch, 'F', 0, 0, ""));
        assertThat(inFirst.await(10, TimeUnit.SECONDS)).isTrue();
        wire.answer(event(watch, 'H', 1, 1, ""));
        wire.answer(event(watch, 'F', 2, 1, ""));
        wire.answer(event(watch, 'H', 1, 2, "n2"));
        release.countDown();
        next();
        Watch.Seen last = (Watch.Seen) next();
        assertThat(last.token()).isEqualTo(2);
        assertThat(last.coalesced()).isTrue();
        assertThat(heard.poll(200, TimeUnit.MILLISECONDS)).isNull();
        synchronized (events) {
            assertThat(events).hasSize(2);
        }
        w.close();
    }

    @Test
    void closeSendsUAndNothingIsHeardAfterIt() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Watch w = wire.engine().observe(KEY, KEY_BYTES, recorder);
        long watch = subscribed();
        w.close();
        assertThat(wire.write()).singleElement().isEqualTo(new Request.Unobserve(watch));
        wire.answer(event(watch, 'H', 1, 5, ""));
        wire.answer(new Answer.Unobserved(watch));
        assertThat(heard.poll(200, TimeUnit.MILLISECONDS)).isNull();
        time.advance(1000 * MS);
        assertThat(wire.write()).as("no resubscription after close").isEmpty();
    }

    @Test
    void busyAndAOneThreeSessionAreUnknownAndTriedAgain() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Watch w = wire.engine().observe(KEY, KEY_BYTES, recorder);
        long watch = subscribed();
        wire.answer(new Answer.Busy(watch));
        assertThat(next()).isEqualTo("unknown");
        wire.speak13Everywhere();
        time.advance(50 * MS);
        assertThat(wire.write()).as("no O on a 1.3 session").isEmpty();
        time.advance(500 * MS - 1);
        assertThat(wire.write()).isEmpty();
        wire.speak14Everywhere(255_000, 256);
        time.advance(1);
        long again = subscribed();
        wire.answer(event(again, 'F', 0, 0, ""));
        assertThat(next()).isInstanceOf(Watch.Seen.class);
        w.close();
    }

    @Test
    void aFollowersNotLeaderSendsTheSubscriptionAgainWithoutUnknown() throws Exception {
        wire.speak14Everywhere(255_000, 256);
        Watch w = wire.engine().observe(KEY, KEY_BYTES, recorder);
        long watch = subscribed();
        wire.notLeader("the server is not the cluster leader (leader=127.0.0.1:7420)");
        assertThat(subscribed()).as("the same subscription, to the leader now").isEqualTo(watch);
        wire.answer(event(watch, 'F', 0, 0, ""));
        assertThat(next()).as("no unknown before it").isInstanceOf(Watch.Seen.class);
        w.close();
    }

    @Test
    void aClientOnRevisionOneThreeCannotObserve() {
        try (LeaseholdClient client = LeaseholdClient.create(ClientOptions.builder().protocolRevision("1.3").build(),
                "127.0.0.1:1")) {
            ObservationListener ignored = new ObservationListener() {
                @Override
                public void event(dev.leasehold.client.KeyEvent event) {
                }

                @Override
                public void unknown(String reason) {
                }
            };
            assertThatThrownBy(() -> client.observe(KEY, ignored)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("1.3");
        }
    }
}
