package dev.leasehold.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.testing.support.LoopbackServer;
import dev.leasehold.testing.support.Wait;

/**
 * Leader election with Spring Integration's {@link LockRegistryLeaderInitiator} over two
 * {@link LeaseholdLockRegistry}s with their own clients (two "nodes"), against a real server, in
 * the style of Spring Integration's {@code RedisLockRegistryLeaderInitiatorTests}: one leader,
 * yield hands over, and a lost lease revokes.
 */
class LeaseholdLockRegistryLeaderInitiatorIntegrationTests {

    private static LeaseholdClient client1;
    private static LeaseholdClient client2;
    private static LeaseholdClient probe;

    private final String role = "leader-" + UUID.randomUUID();
    private LockRegistryLeaderInitiator initiator1;
    private LockRegistryLeaderInitiator initiator2;

    @BeforeAll
    static void start() {
        LoopbackServer server = LoopbackServer.shared();
        client1 = LeaseholdClient.create(server.address());
        client2 = LeaseholdClient.create(server.address());
        probe = LeaseholdClient.create(server.address());
    }

    @AfterAll
    static void stop() {
        client1.close();
        client2.close();
        probe.close();
    }

    @AfterEach
    void stopInitiators() throws Exception {
        for (LockRegistryLeaderInitiator i : new LockRegistryLeaderInitiator[] {initiator1, initiator2}) {
            if (i != null) {
                i.destroy();
            }
        }
    }

    /** Counts grants and revocations, and remembers the fencing token of each grant. */
    static final class Node extends DefaultCandidate {
        final AtomicInteger granted = new AtomicInteger();
        final AtomicInteger revoked = new AtomicInteger();
        volatile boolean leader;

        Node(String id, String role) {
            super(id, role);
        }

        @Override
        public void onGranted(Context ctx) {
            leader = true;
            granted.incrementAndGet();
        }

        @Override
        public void onRevoked(Context ctx) {
            leader = false;
            revoked.incrementAndGet();
        }

        /** As a wait's failure shows it. */
        @Override
        public String toString() {
            return getId() + " leader " + leader + " granted " + granted + " revoked " + revoked;
        }
    }

    private LockRegistryLeaderInitiator initiator(LeaseholdLockRegistry registry, Node node) {
        LockRegistryLeaderInitiator i = new LockRegistryLeaderInitiator(registry, node);
        i.setHeartBeatMillis(200);
        i.setBusyWaitMillis(50);
        return i;
    }

    @Test
    void oneLeaderThenYieldHandsOverThenALostLeaseRevokes() throws Exception {
        LeaseholdLockRegistry registry1 = new LeaseholdLockRegistry(client1, "leaders");
        LeaseholdLockRegistry registry2 = new LeaseholdLockRegistry(client2, "leaders");
        registry1.setLeaseDuration(Duration.ofSeconds(3));
        registry2.setLeaseDuration(Duration.ofSeconds(3));
        Node node1 = new Node("node1", role);
        Node node2 = new Node("node2", role);
        initiator1 = initiator(registry1, node1);
        initiator2 = initiator(registry2, node2);

        initiator1.start();
        Wait.until("node1 to lead", Duration.ofSeconds(10), () -> node1, n -> n.leader);
        initiator2.start();
        // node2 keeps trying (heart beat 200 ms) and must not be granted while node1 leads.
        Wait.holdsFor("node1 leading and node2 never granted", Duration.ofSeconds(1), () -> node1 + "; " + node2,
                seen -> node1.leader && !node2.leader && node2.granted.get() == 0);
        assertThat(initiator1.getContext().isLeader()).isTrue();
        assertThat(initiator2.getContext().isLeader()).isFalse();

        // yield: node1 unlocks, node2 (queued on the server) is granted
        initiator1.getContext().yield();
        Wait.until("node2 to lead once node1 yields", Duration.ofSeconds(10), () -> node1 + "; " + node2,
                seen -> node2.leader);
        // The initiator releases the lock first and tells node1 after, so node2 can lead before
        // node1 hears it was revoked (campaign: revoked 0 just after node2 led, at load 13).
        Wait.until("node1 to be told it was revoked once node2 leads", Duration.ofSeconds(10),
                () -> node1 + "; " + node2, seen -> node1.revoked.get() == 1 && !node1.leader);

        // node2's lease is ended behind its back (an operator releases the token): its next
        // heart beat finds the lease lost, tryLock returns false, and it is revoked.
        long token = Wait.until("node2's token for the role", Duration.ofSeconds(10), () -> leaderToken(registry2), t -> t > 0);
        assertThat(probe.release(registry2.serverKey(role), token, Duration.ofSeconds(5)))
                .isEqualTo(ReleaseOutcome.RELEASED);
        Wait.until("node2 revoked once its lease was released behind its back", Duration.ofSeconds(10), () -> node2,
                n -> n.revoked.get() == 1);
        // and someone leads again
        Wait.until("a node to lead again", Duration.ofSeconds(10), () -> node1 + "; " + node2, seen -> node1.leader || node2.leader);
        assertThat(node1.leader && node2.leader).isFalse();
    }

    /** The token the leading node holds the role with (-1 if none). */
    private long leaderToken(LeaseholdLockRegistry registry) {
        return registry.heldToken(role).orElse(-1L);
    }
}
