package dev.leasehold.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LeaseMathTests {

    private static final long S = LeaseMath.SECOND;
    private static final long MS = 1_000_000L;

    @Test
    void wireWaitRoundsTheTimeLeftUp() {
        long d = 1_000 * S;
        assertThat(LeaseMath.wireWait(d, d - 10 * S)).isEqualTo(10);
        assertThat(LeaseMath.wireWait(d, d - 10 * S + 1)).isEqualTo(10);
        assertThat(LeaseMath.wireWait(d, d - 10 * S - 1)).isEqualTo(11);
        assertThat(LeaseMath.wireWait(d, d - 1)).isEqualTo(1);
        assertThat(LeaseMath.wireWait(d, d - 300 * MS)).isEqualTo(1);
    }

    @Test
    void wireWaitIsCappedAt255() {
        long d = 1_000 * S;
        assertThat(LeaseMath.wireWait(d, d - 255 * S)).isEqualTo(255);
        assertThat(LeaseMath.wireWait(d, d - 256 * S)).isEqualTo(255);
        assertThat(LeaseMath.wireWait(d, d - 900 * S)).isEqualTo(255);
    }

    @Test
    void wireWaitRefusesAPassedDeadline() {
        long d = 1_000 * S;
        assertThat(LeaseMath.wireWait(d, d)).isEqualTo(-1);
        assertThat(LeaseMath.wireWait(d, d + 1)).isEqualTo(-1);
        assertThat(LeaseMath.wireWait(d, d + 5 * S)).isEqualTo(-1);
    }

    @Test
    void wireWaitWorksAcrossNanoTimeOverflow() {
        long d = Long.MIN_VALUE + 2 * S; // nanoTime wrapped
        long now = Long.MAX_VALUE - S + 1; // 3 s before d, modulo 2^64
        assertThat(LeaseMath.wireWait(d, now)).isEqualTo(3);
    }

    @Test
    void marginIsTheFloorForShortIntervals() {
        // 1 % of 1 s is 10 ms, below the 50 ms floor
        assertThat(LeaseMath.marginNanos(0, 1, 50 * MS, 0.01)).isEqualTo(50 * MS);
        // 1 % of 5 s is exactly the floor
        assertThat(LeaseMath.marginNanos(0, 5, 50 * MS, 0.01)).isEqualTo(50 * MS);
    }

    @Test
    void marginCoversDriftOverQueuedTimeAndLease() {
        // lease 30 s alone: 300 ms; after 200 s queued: 1 % of 230 s = 2.3 s
        assertThat(LeaseMath.marginNanos(0, 30, 50 * MS, 0.01)).isEqualTo(300 * MS);
        assertThat(LeaseMath.marginNanos(200_000, 30, 50 * MS, 0.01)).isEqualTo(2_300 * MS);
    }

    @Test
    void validUntilIsSendStartPlusQueuedPlusLeaseMinusMargin() {
        long sendStart = 42 * S;
        assertThat(LeaseMath.validUntil(sendStart, 0, 10, 50 * MS, 0.01)).isEqualTo(sendStart + 10 * S - 100 * MS);
        assertThat(LeaseMath.validUntil(sendStart, 1_500, 10, 50 * MS, 0.01))
                .isEqualTo(sendStart + 1_500 * MS + 10 * S - 115 * MS);
        // without drift the floor applies
        assertThat(LeaseMath.validUntil(sendStart, 1_500, 10, 50 * MS, 0))
                .isEqualTo(sendStart + 1_500 * MS + 10 * S - 50 * MS);
    }

    @Test
    void leaseEndUpperBoundIsAfterTheLease() {
        assertThat(LeaseMath.leaseEndUpperBound(7 * S, 10, 50 * MS, 0.01)).isEqualTo(17 * S + 100 * MS);
    }

    @Test
    void earliestAndLatestCompareByDifference() {
        assertThat(LeaseMath.earliest(Long.MAX_VALUE, Long.MIN_VALUE)).isEqualTo(Long.MAX_VALUE);
        assertThat(LeaseMath.latest(Long.MAX_VALUE, Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
        assertThat(LeaseMath.earliest(3, 5)).isEqualTo(3);
        assertThat(LeaseMath.latest(3, 5)).isEqualTo(5);
    }
}
