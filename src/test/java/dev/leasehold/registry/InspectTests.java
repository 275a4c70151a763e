package dev.leasehold.registry;

import static dev.leasehold.registry.RegistryHarness.key;
import static dev.leasehold.registry.RegistryHarness.token;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** What inspect shows as the key changes, on a manual clock; and top-N over many keys. */
class InspectTests {

    final RegistryHarness h = new RegistryHarness(new RegistryLimits(100, 1000, 100, 1000, 3_000_000_000L));
    final SessionHandle holder = new SessionHandle();
    final SessionHandle w1 = new SessionHandle();
    final SessionHandle w2 = new SessionHandle();

    @Test
    void showsTheHolderTheLeaseAndTheWaitersAsTheyChange() {
        holder.describe(new SessionHandle.Peer("10.0.0.7:51234", "CN=orders"));
        assertThat(h.registry.inspect(key("orders/42"), 5).state()).isEqualTo(KeyView.State.FREE);

        long token = token(h.acquire("orders/42", 0, 30, 1, holder));
        h.tick(10_000);
        KeyView held = h.registry.inspect(key("orders/42"), 5);
        assertThat(held.state()).isEqualTo(KeyView.State.HELD);
        assertThat(held.token()).isEqualTo(token);
        assertThat(held.grantedAgoNanos()).isEqualTo(10_000_000_000L);
        assertThat(held.leaseRemainingNanos()).isEqualTo(20_000_000_000L);
        assertThat(held.longestLeaseSeconds()).isEqualTo(30);
        assertThat(held.holder()).isEqualTo(new SessionHandle.Peer("10.0.0.7:51234", "CN=orders"));

        h.acquire("orders/42", 60, 30, 2, w1);
        h.tick(1000);
        h.acquire("orders/42", 5, 30, 3, w2);
        h.extend("orders/42", token, 45);
        KeyView queued = h.registry.inspect(key("orders/42"), 5);
        assertThat(queued.state()).isEqualTo(KeyView.State.QUEUED);
        assertThat(queued.waiters()).isEqualTo(2);
        assertThat(queued.oldestWaitsRemainingNanos()).containsExactly(59_000_000_000L, 5_000_000_000L);
        assertThat(queued.longestLeaseSeconds()).isEqualTo(45);
        assertThat(h.registry.inspect(key("orders/42"), 1).oldestWaitsRemainingNanos()).hasSize(1);

        h.tick(45_000); // lease over: lock-delay of 3 s, the second waiter timed out meanwhile
        KeyView delayed = h.registry.inspect(key("orders/42"), 5);
        assertThat(delayed.state()).isEqualTo(KeyView.State.DELAYED);
        assertThat(delayed.token()).isZero();
        assertThat(delayed.holder()).isNull();
        assertThat(delayed.delayedToken()).isEqualTo(token);
        assertThat(delayed.delayRemainingNanos()).isEqualTo(3_000_000_000L);
        assertThat(delayed.waiters()).isEqualTo(1);

        h.tick(3000);
        KeyView next = h.registry.inspect(key("orders/42"), 5);
        assertThat(next.state()).isEqualTo(KeyView.State.HELD);
        assertThat(next.token()).isGreaterThan(token);
        assertThat(next.holder()).isEqualTo(SessionHandle.Peer.UNKNOWN);
    }

    @Test
    void topFindsTheLongestQueuesAndTheOldestGrantsAcrossLanesAndChunks() {
        for (int i = 0; i < 500; i++) {
            h.acquire("k" + i, 0, 255, i, holder);
            h.tick(1);
        }
        for (int q = 1; q <= 4; q++) {
            for (int j = 0; j < q * 3; j++) {
                h.acquire("k" + (100 + q), 60, 10, 10_000 + q * 100 + j, w1);
            }
        }
        TopKeys top = h.registry.top(3, 7, 2);
        assertThat(top.scannedKeys()).isEqualTo(500);
        assertThat(top.longestQueues()).extracting(KeyView::key).containsExactly("k104", "k103", "k102");
        assertThat(top.longestQueues().get(0).waiters()).isEqualTo(12);
        assertThat(top.longestQueues().get(0).oldestWaitsRemainingNanos()).hasSize(2);
        assertThat(top.heldLongest()).extracting(KeyView::key).containsExactly("k0", "k1", "k2");
        assertThat(h.registry.top(1000, 1, 0).heldLongest()).hasSize(500);
    }

    @Test
    void topOfAnEmptyRegistryIsEmpty() {
        TopKeys top = h.registry.top(10, 1024, 5);
        assertThat(top.longestQueues()).isEmpty();
        assertThat(top.heldLongest()).isEqualTo(List.of());
    }
}
