package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;

/**
 * Observe in cluster mode (PROTOCOL.md 16.8) on three in-process nodes (real Ratis over loopback,
 * real protocol ports): the leader writes a watch's first event after its no-op commits and every
 * later event after its decision commits, a follower answers {@code O} with {@code X 8} and
 * {@code U} with {@code U}, and a leader that loses its leadership ends its watches with the
 * session's {@code X 9}.
 */
class ClusterObserveIntegrationTests {

    @RegisterExtension
    final InProcessClusters clusters = new InProcessClusters();

    static Answer.Event event(long watch, int state, int cause, long token) {
        return new Answer.Event(watch, state, cause, 0, token, state == 'H' ? 1 : 0, 0, new byte[0]);
    }

    @Test
    void theLeaderServesWatchesAFollowerRefusesThemAndLeadershipLossEndsThem() throws Exception {
        InProcessCluster cluster = clusters.start(Duration.ofMillis(1000), Duration.ofMillis(2000));
        int[] ports = clusters.clientPorts();
        int leader = cluster.awaitServingLeader(-1);
        byte[] key = Request.key("cluster/observed");
        int follower = (leader + 1) % 3;
        try (RawClient f = new RawClient(ports[follower])) {
            assertThat(f.send(new Request.Unobserve(3)).next()).as("every node answers U")
                    .isEqualTo(new Answer.Unobserved(3));
            Answer x = f.send(new Request.Observe(3, key)).next();
            assertThat(x).as("a follower executes no O").isEqualTo(new Answer.Error(8, "leader=127.0.0.1:" + ports[leader]));
        }
        long t2;
        try (RawClient observer = new RawClient(ports[leader]); RawClient holder = new RawClient(ports[leader])) {
            assertThat(observer.send(new Request.Observe(1, key)).next(10_000))
                    .as("the first event, after the no-op's commit").isEqualTo(event(1, 'F', 0, 0));
            long t = ((Answer.Acquired) holder.send(new Request.Acquire(0, 30, 1, key)).next()).token();
            assertThat(observer.next()).isEqualTo(event(1, 'H', 1, t));
            assertThat(holder.send(new Request.Release(t, key)).next()).isEqualTo(new Answer.Released(t));
            assertThat(observer.next()).isEqualTo(event(1, 'F', 2, t));
            t2 = ((Answer.Acquired) holder.send(new Request.Acquire(0, 30, 2, key)).next()).token();
            assertThat(observer.next()).isEqualTo(event(1, 'H', 1, t2));
            assertThat(cluster.registry(leader).heldKeys()).isEqualTo(1);

            cluster.transferLeadership(follower);
            Answer end = observer.next(10_000);
            assertThat(end).as("leadership lost: the watch ends with its session's X 9").isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) end).code()).isEqualTo(9);
        }
        try (RawClient observer = new RawClient(ports[follower])) {
            assertThat(observer.send(new Request.Observe(2, key)).next(10_000))
                    .as("the new leader's first event: the replicated holder").isEqualTo(event(2, 'H', 0, t2));
        }
    }
}
