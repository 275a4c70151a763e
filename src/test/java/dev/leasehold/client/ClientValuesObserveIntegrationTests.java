package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The Java client's values and observations against the real server over real sockets
 * (PROTOCOL.md 9.15, 9.16): a value on an acquire and by proclaim, seen by an observer beside the
 * token; proclaim's outcomes; events in order and close; a session broken under an observation
 * ({@link FaultProxy}) reported unknown, then subscribed again; and a server that answers the
 * Hello with {@code X 1} (played by the proxy), where values are not sent and the observation
 * stays unknown.
 */
class ClientValuesObserveIntegrationTests {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();

    @RegisterExtension
    final ClientFixture fx = new ClientFixture(server, "v14/");

    /** Records what a listener heard: each {@link KeyEvent}, and "unknown: reason". */
    static final class Heard implements ObservationListener {
        final BlockingQueue<Object> all = new LinkedBlockingQueue<>();

        @Override
        public void event(KeyEvent event) {
            all.add(event);
        }

        @Override
        public void unknown(String reason) {
            all.add("unknown: " + reason);
        }

        Object next() throws InterruptedException {
            Object o = all.poll(15, TimeUnit.SECONDS);
            assertThat(o).as("the listener heard something within 15 s").isNotNull();
            return o;
        }

        KeyEvent nextEvent() throws InterruptedException {
            Object o = next();
            assertThat(o).isInstanceOf(KeyEvent.class);
            return (KeyEvent) o;
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void anObserverSeesGrantValueSetAndReleaseInOrderAndCloseSendsU() throws Exception {
        LeaseholdClient watcher = fx.viaProxy(ClientOptions.builder());
        Heard heard = new Heard();
        Observation o = watcher.observe(fx.key(), heard);
        KeyEvent first = heard.nextEvent();
        assertThat(first.state()).isEqualTo(KeyEvent.State.FREE);
        assertThat(first.cause()).isEqualTo(KeyEvent.Cause.CURRENT);

        Ticket t = ClientFixture.ticket(fx.direct().acquire(fx.key(), Duration.ZERO, 30, utf8("n1")));
        KeyEvent granted = heard.nextEvent();
        assertThat(granted.state()).isEqualTo(KeyEvent.State.HELD);
        assertThat(granted.cause()).isEqualTo(KeyEvent.Cause.GRANT);
        assertThat(granted.token()).isEqualTo(t.token());
        assertThat(granted.valueText()).isEqualTo("n1");

        assertThat(t.proclaim("n2")).isEqualTo(new ProclaimOutcome.Proclaimed());
        KeyEvent set = heard.nextEvent();
        assertThat(set.cause()).isEqualTo(KeyEvent.Cause.VALUE_SET);
        assertThat(set.valueText()).isEqualTo("n2");

        assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);
        KeyEvent released = heard.nextEvent();
        assertThat(released.state()).isEqualTo(KeyEvent.State.FREE);
        assertThat(released.cause()).isEqualTo(KeyEvent.Cause.RELEASE);
        assertThat(released.token()).as("the highest token known stays").isEqualTo(t.token());

        o.close();
        Wait.until("the U of the close reached the server", Duration.ofSeconds(5),
                () -> fx.proxy().requests().stream().filter(r -> r.type().op() == 'U').count(), n -> n == 1);
        ClientFixture.ticket(fx.direct().acquire(fx.key(), Duration.ZERO, 30)).release();
        assertThat(heard.all.poll(300, TimeUnit.MILLISECONDS)).as("nothing after close").isNull();
    }

    @Test
    void proclaimOutcomes() {
        Ticket t = ClientFixture.ticket(fx.direct().acquire(fx.key(), Duration.ZERO, 30));
        assertThat(t.proclaim(utf8("a\nb"))).as("a grant made without a value").isEqualTo(
                new ProclaimOutcome.Proclaimed());
        assertThat(t.proclaimAsync(new byte[0]).join()).as("clearing it").isEqualTo(new ProclaimOutcome.Proclaimed());
        assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(t.proclaim("late")).as("released: no request").isEqualTo(new ProclaimOutcome.NotHeld());

        Ticket other = ClientFixture.ticket(fx.direct().acquire(fx.key(), Duration.ZERO, 1));
        Ticket stale = new Ticket(fx.direct().engine(), fx.key(), utf8(fx.key()), other.token() - 1,
                System.nanoTime() + 30_000_000_000L, System.nanoTime() + 31_000_000_000L);
        assertThat(stale.proclaim("x")).as("a token that is not the active grant: N").isEqualTo(
                new ProclaimOutcome.NotHeld());

        Ticket shared = ClientFixture.ticket(fx.direct().acquireShared(fx.key() + "/r", 0, Duration.ZERO, 30));
        assertThatThrownBy(() -> shared.proclaim("x")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> other.proclaim(new byte[300])).as("over the server's 256 bytes: not sent")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("max-value-bytes");
        assertThat(fx.direct().acquire(fx.key() + "/big", Duration.ZERO, 30, new byte[300]))
                .isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                        u -> assertThat(u.reason()).contains("max-value-bytes of 256"));
        shared.release();
    }

    @Test
    void aBrokenSessionIsUnknownThenSubscribedAgain() throws Exception {
        LeaseholdClient watcher = fx.viaProxy(ClientOptions.builder());
        Heard heard = new Heard();
        try (Observation o = watcher.observe(fx.key(), heard)) {
            assertThat(heard.nextEvent().state()).isEqualTo(KeyEvent.State.FREE);
            Ticket t = ClientFixture.ticket(fx.direct().acquire(fx.key(), Duration.ZERO, 30, utf8("me")));
            assertThat(heard.nextEvent().token()).isEqualTo(t.token());
            int connections = fx.proxy().connectionsAccepted();
            fx.proxy().closeAllConnections();
            assertThat(heard.next()).asString().startsWith("unknown");
            KeyEvent again = heard.nextEvent();
            System.out.println("observe across a broken session: unknown, then " + again + "; connections "
                    + connections + " -> " + fx.proxy().connectionsAccepted());
            assertThat(again.cause()).as("a new subscription's first event").isEqualTo(KeyEvent.Cause.CURRENT);
            assertThat(again.state()).isEqualTo(KeyEvent.State.HELD);
            assertThat(again.token()).isEqualTo(t.token());
            assertThat(again.valueText()).isEqualTo("me");
            assertThat(fx.proxy().connectionsAccepted()).isGreaterThan(connections);
            t.release();
            assertThat(heard.nextEvent().state()).isEqualTo(KeyEvent.State.FREE);
        }
    }

    @Test
    void aServerAnsweringHelloWithUnknownOpTakesNoValueAndTheObservationStaysUnknown() throws Exception {
        fx.proxy().refuseHello(true);
        LeaseholdClient c = fx.viaProxy(ClientOptions.builder());
        Heard heard = new Heard();
        try (Observation o = c.observe(fx.key(), heard)) {
            assertThat(heard.next()).asString().startsWith("unknown").contains("1.3");
            assertThat(c.acquire(fx.key() + "/v", Duration.ZERO, 30, utf8("n1")))
                    .isInstanceOfSatisfying(AcquireOutcome.Unavailable.class,
                            u -> assertThat(u.reason()).contains("revision 1.3"));
            Ticket t = ClientFixture.ticket(c.acquire(fx.key(), Duration.ZERO, 30));
            assertThatThrownBy(() -> t.proclaim("n1")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("1.3");
            Thread.sleep(1200); // real time: at least two 500 ms retries of the subscription must pass
            assertThat(heard.all).as("still unknown, told once").isEmpty();
            assertThat(fx.proxy().requests()).as("no 1.4 frame reached the 1.3 server")
                    .noneMatch(r -> r.type().op() == 'O' || r.type().op() == 'V' || r.type().op() == 'M');
            t.release();
        }
    }
}
