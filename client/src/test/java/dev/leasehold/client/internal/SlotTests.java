package dev.leasehold.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;

/** A pool slot's rules on plain values: which address next, and when it may start a session. */
class SlotTests {

    private static final long MS = 1_000_000L;

    @Test
    void afterAFullRoundOfFailedSetupsItBacksOffDoubling() {
        Slot slot = new Slot(0, 0);
        slot.setupFailed(3, 0);
        slot.setupFailed(3, 0);
        assertThat(slot.addressIndex).isEqualTo(2);
        assertThat(slot.mayStart(0)).as("not a full round yet").isTrue();
        slot.setupFailed(3, 0);
        assertThat(slot.addressIndex).isZero();
        assertThat(slot.waitsToRetry()).isTrue();
        assertThat(slot.retryAt()).isEqualTo(100 * MS);
        assertThat(slot.mayStart(99 * MS)).isFalse();
        assertThat(slot.mayStart(100 * MS)).isTrue();
        for (int i = 0; i < 3; i++) {
            slot.setupFailed(3, 0);
        }
        assertThat(slot.retryAt()).as("second round").isEqualTo(200 * MS);
        for (int i = 0; i < 3 * 20; i++) {
            slot.setupFailed(3, 0);
        }
        assertThat(slot.retryAt()).as("capped").isEqualTo(1000 * MS);
    }

    @Test
    void aSessionThatWasUpResetsTheCount() {
        Slot slot = new Slot(0, 0);
        slot.setupFailed(1, 0);
        slot.ended(true, 1, 0);
        slot.ended(false, 1, 0);
        assertThat(slot.retryAt()).as("a first round again").isEqualTo(100 * MS);
    }

    @Test
    void everyThirdNamedLeaderInARowWaitsAndTheCloseAfterXEightKeepsTheCount() {
        Slot slot = new Slot(0, 0);
        slot.notLeaderNamed(0);
        slot.ended(true, 3, 0); // the X 8 session closing: counts stand
        assertThat(slot.mayStart(0)).isTrue();
        slot.notLeaderNamed(0);
        slot.ended(true, 3, 0);
        slot.notLeaderNamed(0);
        slot.ended(true, 3, 0);
        assertThat(slot.mayStart(249 * MS)).isFalse();
        assertThat(slot.mayStart(250 * MS)).isTrue();
    }

    @Test
    void noLeaderKnownMovesToTheNextSeedAfter50msDoublingTo500ms() {
        Slot slot = new Slot(0, 2);
        long[] waits = new long[6];
        for (int i = 0; i < waits.length; i++) {
            slot.noLeaderKnown(3, 0);
            slot.ended(true, 3, 0);
            waits[i] = slot.retryAt() / MS;
        }
        assertThat(waits).containsExactly(50, 100, 200, 400, 500, 500);
        assertThat(slot.addressIndex).isEqualTo((2 + 6) % 3);
    }

    @Test
    void leaderHints() {
        assertThat(LeaderHint.parse("leader=10.0.0.2:7420")).isEqualTo(InetSocketAddress.createUnresolved("10.0.0.2", 7420));
        assertThat(LeaderHint.parse("leader=::1:7420")).isEqualTo(InetSocketAddress.createUnresolved("::1", 7420));
        assertThat(LeaderHint.parse("")).isNull();
        assertThat(LeaderHint.parse("leader=nohost")).isNull();
        assertThat(LeaderHint.parse("leader=h:99999")).isNull();
        assertThat(LeaderHint.sameAddress(InetSocketAddress.createUnresolved("a", 1),
                InetSocketAddress.createUnresolved("a", 1))).isTrue();
        assertThat(LeaderHint.sameAddress(InetSocketAddress.createUnresolved("a", 1),
                InetSocketAddress.createUnresolved("a", 2))).isFalse();
    }
}
