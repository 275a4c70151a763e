package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.RequestType;
import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * {@link LeaseholdClient#keepAlive} against a real server, end to end: a lease kept well past its
 * length, NotHeld heard on the keep-alive thread, a silent server (the proxy stalls answers), the
 * client's close. The rules at their exact instants (periods, AT_RISK, once-only loss, silence
 * after the owner's release, arguments) are in {@code KeepAliveTests} on a manual clock; here
 * leases are 1-3 s because the server's lease is real time.
 */
class KeepAliveIntegrationTests {

    private TestServer server;
    private FaultProxy proxy;
    private LeaseholdClient client;
    private LeaseholdClient other;
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final List<String> threads = new CopyOnWriteArrayList<>();

    private final LeaseListener listener = new LeaseListener() {
        @Override
        public void leaseLost(Ticket ticket, LossReason reason, String detail) {
            threads.add(Thread.currentThread().getName());
            events.add("LOST " + reason);
        }

        @Override
        public void leaseAtRisk(Ticket ticket, Duration remaining) {
            threads.add(Thread.currentThread().getName());
            events.add("AT_RISK");
        }
    };

    @BeforeEach
    void start() throws Exception {
        server = TestServer.start(Map.of());
        proxy = FaultProxy.start(server.port());
        client = LeaseholdClient.create(ClientOptions.builder().poolSize(1).threadNamePrefix("ka").build(),
                List.of(proxy.address()));
        other = LeaseholdClient.create(ClientOptions.defaults(),
                List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port())));
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        other.close();
        proxy.close();
        server.close();
    }

    private Ticket acquire(String key, int lease) {
        return ((AcquireOutcome.Acquired) client.acquire(key, 0, lease)).ticket();
    }

    @Test
    void keepsALeaseAliveWellPastItsLengthUntilClosed() throws Exception {
        // A 2 s lease: a keep-alive that extends every third of it rides out a stall of about 1.3 s
        // (a 1 s lease left 0.7 s, and a campaign run at load 9 saw the ticket lapse once).
        Ticket ticket = acquire("ka/alive", 2);
        try (KeepAlive keepAlive = client.keepAlive(ticket, 2, listener)) {
            Thread.sleep(5000); // real time: the server's 2 s lease must run out two and a half times over (the server keeps real time)
            long extends_ = proxy.requests().stream().filter(r -> r.type() == RequestType.EXTEND).count();
            String seen = "events " + events + ", lost " + keepAlive.isLost() + " " + keepAlive.lossReason()
                    + ", " + extends_ + " Extends";
            assertThat(keepAlive.isLost()).as(seen).isFalse();
            assertThat(ticket.isValid()).as(seen).isTrue();
            assertThat(other.acquire("ka/alive", 0, 1)).isInstanceOf(AcquireOutcome.TimedOut.class);
            assertThat(extends_).as("about one Extend per third of a lease: " + seen).isBetween(5L, 11L);
        }
        ticket.release();
        assertThat(events).isEmpty();
    }

    @Test
    void notHeldIsLostOnceOnTheKeepAliveThread() throws Exception {
        Ticket ticket = acquire("ka/nh", 3);
        KeepAlive keepAlive = client.keepAlive(ticket, 3, listener);
        assertThat(other.release("ka/nh", ticket.token(), Duration.ofSeconds(5))).isEqualTo(ReleaseOutcome.RELEASED);
        Wait.until("the keep-alive of ka/nh to be lost (seen: the listener's events)", Duration.ofSeconds(10),
                () -> List.copyOf(events), e -> keepAlive.isLost());
        assertThat(keepAlive.lossReason()).contains(LossReason.NOT_HELD);
        assertThat(events).containsExactly("LOST NOT_HELD");
        assertThat(threads).allMatch(n -> n.equals("ka-keepalive"));
    }

    @Test
    void aSilentServerIsAtRiskThenLostWhenTheValidityEnds() {
        Ticket ticket = acquire("ka/silent", 3);
        KeepAlive keepAlive = client.keepAlive(ticket, 3, listener);
        proxy.stallServerToClient(true); // Extends are sent, no answer comes back
        Wait.until("the keep-alive of ka/silent to be lost (seen: the listener's events)", Duration.ofSeconds(10),
                () -> List.copyOf(events), e -> keepAlive.isLost());
        assertThat(events).contains("AT_RISK").last().isEqualTo("LOST VALIDITY_ENDED");
        assertThat(events.indexOf("AT_RISK")).isLessThan(events.indexOf("LOST VALIDITY_ENDED"));
        assertThat(ticket.isValid()).isFalse();
    }

    @Test
    void closingTheClientLosesWhatItKeptAlive() {
        Ticket ticket = acquire("ka/close", 30);
        KeepAlive keepAlive = client.keepAlive(ticket, 30, listener);
        client.close();
        assertThat(keepAlive.lossReason()).contains(LossReason.CLIENT_CLOSED);
        assertThat(events).containsExactly("LOST CLIENT_CLOSED");
        assertThatThrownBy(() -> client.keepAlive(ticket, 30, listener)).isInstanceOf(IllegalStateException.class);
    }
}
