package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.CheckOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Wait;

/**
 * The Check request (PROTOCOL.md section 11) on three real server processes: the leader answers
 * {@code C}, a follower {@code X 8} naming the leader; a leader paused past the election timeout
 * ({@code SIGSTOP}) that wakes with a Check in its socket buffer, for a token the new leader has
 * released meanwhile, must not answer {@code C} (its no-op entry never commits: {@code X 9});
 * and the official client's {@code check} follows the grant across the failover to the new leader,
 * {@code Current} before the Release there and {@code NotCurrent} after it.
 */
class ClusterCheckIntegrationTests {

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster == null) {
            return; // the test stopped before it picked ports
        }
        for (ServerProcess p : cluster.nodes) {
            if (p != null) {
                p.signal("CONT"); // a paused process cannot be stopped gracefully
                p.close();
            }
        }
    }

    @Test
    void onlyTheServingLeaderSaysCurrentAcrossAFailover() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        for (int i = 0; i < 3; i++) {
            cluster.launch(i, nodeProps(i));
        }
        for (int i = 0; i < 3; i++) {
            awaitLog(i, "Leasehold protocol listening", 120_000);
        }
        byte[] key = Request.key("fenced/1");
        cluster.awaitEveryMemberStored(120_000); // the leader is paused below: the other two must be able to elect
        int leader = leaderIndex(60_000);
        int follower = (leader + 1) % 3;
        long token;
        try (RawClient c = new RawClient(cluster.clientPorts[leader])) {
            c.send(new Request.Acquire(0, 120, 1, key));
            token = ((Answer.Acquired) c.next()).token();
            c.send(new Request.Check(token, key));
            assertThat(c.next()).as("the leader, after its no-op commits").isEqualTo(new Answer.Current(token));
            c.send(new Request.Check(token + 1, key));
            assertThat(c.next()).isEqualTo(new Answer.NotHeld(token + 1));
        }
        try (RawClient c = new RawClient(cluster.clientPorts[follower])) {
            c.send(new Request.Check(token, key));
            Answer a = c.next();
            assertThat(a).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) a).code()).isEqualTo(8);
            assertThat(((Answer.Error) a).message()).isEqualTo("leader=127.0.0.1:" + cluster.clientPorts[leader]);
            assertThat(c.closedByServer(5000)).isTrue();
        }
        System.out.printf("C outcomes before the failover: leader C, follower X 8 (token %d)%n", token);

        List<InetSocketAddress> seeds = new ArrayList<>();
        for (int port : cluster.clientPorts) {
            seeds.add(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        }
        try (LeaseholdClient client = LeaseholdClient.create(dev.leasehold.client.ClientOptions.builder().build(),
                seeds);
                RawClient stale = new RawClient(cluster.clientPorts[leader])) {
            assertThat(client.check("fenced/1", token, Duration.ofSeconds(10))).isInstanceOf(
                    CheckOutcome.Current.class);
            stale.send(new Request.Ping(1));
            assertThat(stale.next()).isEqualTo(new Answer.Pong(1)); // served by the leader before its pause

            cluster.nodes[leader].signal("STOP");
            long t0 = System.nanoTime();
            // Sent while the old leader sleeps: it sits in that process's socket buffer.
            stale.send(new Request.Check(token, key));
            CheckOutcome afterFailover = client.check("fenced/1", token, Duration.ofSeconds(30));
            long failoverMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(afterFailover).as("the new leader holds the replicated grant (%d ms after the pause)%s",
                    failoverMs, afterFailover instanceof CheckOutcome.Current ? "" : cluster.lastLogs(30)).isInstanceOf(
                    CheckOutcome.Current.class);
            assertThat(client.release("fenced/1", token, Duration.ofSeconds(10))).isEqualTo(
                    dev.leasehold.client.ReleaseOutcome.RELEASED);
            assertThat(client.check("fenced/1", token, Duration.ofSeconds(10))).isInstanceOf(
                    CheckOutcome.NotCurrent.class);

            cluster.nodes[leader].signal("CONT");
            // The old leader still believes the grant runs (its lease is 120 s); only the barrier
            // keeps it from saying so. Whatever comes must not be C: X 9, or the session closes.
            Answer fromStale;
            try {
                fromStale = stale.poll(15_000);
            } catch (IOException closed) {
                fromStale = null;
            }
            System.out.printf("C outcomes across the failover: new leader C after %d ms, N after Release;"
                    + " woken old leader answered %s%n", failoverMs, fromStale == null ? "nothing (closed)" : fromStale);
            assertThat(fromStale).as("a deposed leader never says current").isNotInstanceOf(Answer.Current.class);
            if (fromStale instanceof Answer.Error x) {
                assertThat(x.code()).isEqualTo(9);
            }
        }
    }

    private Map<String, String> nodeProps(int i) {
        return cluster.props(i, "WARN", Map.of());
    }

    /** The node that grants a wait=0 probe Acquire (bounded). */
    private int leaderIndex(long timeoutMs) throws Exception {
        long[] owner = {100};
        // No node grants yet: an election takes real time, poll again.
        return Wait.until("a node of " + String.join(", ", cluster.ids) + " to grant a probe",
                Duration.ofMillis(timeoutMs),
                Duration.ofMillis(100), () -> {
                    StringBuilder seen = new StringBuilder();
                    for (int i = 0; i < 3; i++) {
                        try (RawClient c = new RawClient(cluster.clientPorts[i])) {
                            c.send(new Request.Acquire(0, 1, owner[0], Request.key("leader-probe-" + owner[0]++)));
                            Answer a = c.poll(2000);
                            if (a instanceof Answer.Acquired) {
                                return new Wait.Seen<>(i, cluster.ids[i] + " granted");
                            }
                            seen.append(cluster.ids[i]).append(" answered ").append(a).append("; ");
                        } catch (IOException e) {
                            seen.append(cluster.ids[i]).append(' ').append(e).append("; "); // not up, or X 8 and closed: the next node
                        }
                    }
                    return Wait.Seen.<Integer>nothing(seen.toString());
                }, Wait.Seen::found).value();
    }

    private void awaitLog(int i, String text, long timeoutMs) throws Exception {
        cluster.awaitLog(i, text, timeoutMs);
    }
}
