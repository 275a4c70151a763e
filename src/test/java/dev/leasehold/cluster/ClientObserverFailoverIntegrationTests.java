package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.KeyEvent;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Observation;
import dev.leasehold.client.ObservationListener;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.client.Ticket;
import dev.leasehold.testing.ServerProcess;

/**
 * An observer follows a key across a leader's {@code kill -9} on three real server processes
 * (PROTOCOL.md 9.15, 16.8): it sees the grant with its value on the old leader, is told unknown
 * when that leader dies, subscribes again over the seed list, and gets the new leader's state:
 * the replicated grant with its value, then its release; no token ever goes back.
 */
class ClientObserverFailoverIntegrationTests {

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;

    @AfterEach
    void stop() {
        if (cluster == null) {
            return;
        }
        for (ServerProcess p : cluster.nodes) {
            if (p != null) {
                p.close();
            }
        }
    }

    /** What the listener heard, in order: each {@link KeyEvent}, or "unknown: reason". */
    private final BlockingQueue<Object> heard = new LinkedBlockingQueue<>();
    private final List<KeyEvent> events = new ArrayList<>();

    private Object next(long timeoutMs) throws InterruptedException {
        Object o = heard.poll(timeoutMs, TimeUnit.MILLISECONDS);
        assertThat(o).as("the listener heard something within %d ms", timeoutMs).isNotNull();
        if (o instanceof KeyEvent e) {
            if (!events.isEmpty()) {
                assertThat(e.token()).as("never back: %s after %s", e, events).isGreaterThanOrEqualTo(
                        events.get(events.size() - 1).token());
            }
            events.add(e);
        }
        return o;
    }

    private KeyEvent nextEvent(long timeoutMs) throws InterruptedException {
        Object o = next(timeoutMs);
        assertThat(o).isInstanceOf(KeyEvent.class);
        return (KeyEvent) o;
    }

    @Test
    void anObserverFollowsAKeyAcrossALeaderKill() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        for (int i = 0; i < 3; i++) {
            cluster.launch(i, cluster.props(i, "WARN", Map.of()));
        }
        for (int i = 0; i < 3; i++) {
            cluster.awaitLog(i, "Leasehold protocol listening", 120_000);
        }
        cluster.awaitEveryMemberStored(120_000); // the leader dies below: the other two must be able to elect
        int leader = cluster.servingLeader(60_000, -1);
        List<InetSocketAddress> seeds = new ArrayList<>();
        for (int port : cluster.clientPorts) {
            seeds.add(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        }
        ObservationListener listener = new ObservationListener() {
            @Override
            public void event(KeyEvent event) {
                heard.add(event);
            }

            @Override
            public void unknown(String reason) {
                heard.add("unknown: " + reason);
            }
        };
        try (LeaseholdClient holder = LeaseholdClient.create(ClientOptions.builder().build(), seeds);
                LeaseholdClient watcher = LeaseholdClient.create(ClientOptions.builder().build(), seeds);
                Observation o = watcher.observe("lead", listener)) {
            assertThat(nextEvent(30_000).state()).isEqualTo(KeyEvent.State.FREE);
            AcquireOutcome got = holder.acquire("lead", Duration.ofSeconds(10), 60,
                    ("n" + leader).getBytes(StandardCharsets.UTF_8));
            assertThat(got).isInstanceOf(AcquireOutcome.Acquired.class);
            Ticket t = ((AcquireOutcome.Acquired) got).ticket();
            KeyEvent held = nextEvent(10_000);
            assertThat(held.state()).isEqualTo(KeyEvent.State.HELD);
            assertThat(held.token()).isEqualTo(t.token());
            assertThat(held.valueText()).isEqualTo("n" + leader);

            long t0 = System.nanoTime();
            cluster.nodes[leader].kill9();
            assertThat(next(10_000)).as("the old leader's death is reported").asString().startsWith("unknown");
            KeyEvent after = nextEvent(60_000);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            System.out.printf("observe across a leader kill: unknown, then %s %d ms after the kill%n", after, ms);
            assertThat(after.cause()).as("the new subscription's first event").isEqualTo(KeyEvent.Cause.CURRENT);
            assertThat(after.state()).as("the replicated grant").isEqualTo(KeyEvent.State.HELD);
            assertThat(after.token()).isEqualTo(t.token());
            assertThat(after.valueText()).as("its value, replicated with it").isEqualTo("n" + leader);

            assertThat(t.release()).isEqualTo(ReleaseOutcome.RELEASED);
            KeyEvent free = nextEvent(10_000);
            assertThat(free.state()).isEqualTo(KeyEvent.State.FREE);
            assertThat(free.token()).isEqualTo(t.token());
        }
    }
}
