package dev.leasehold.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

/** What {@link Bench}'s timed loops measure: per-thread stats, one iteration's step, one run's totals. */
final class Load {

    private Load() {
    }

    /** Per-thread measurements; merged after the run. */
    static final class Stats {
        final Histogram acquire = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        final Histogram release = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        final Histogram ping = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        /** W2: release sent by one worker → grant returned to the next (the hand-off as users see it). */
        final Histogram gap = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        boolean recording;
        long pairs;
        long notGranted;
        long grants;
        long handoffs;

        void merge(Stats o) {
            handoffs += o.handoffs;
            acquire.add(o.acquire);
            release.add(o.release);
            ping.add(o.ping);
            gap.add(o.gap);
            pairs += o.pairs;
            notGranted += o.notGranted;
            grants += o.grants;
        }
    }

    /** One iteration of a load thread; returns the pairs (or hand-offs) it completed. */
    interface Step {
        long run(LockConn c, Stats s, int thread, int iteration) throws IOException;
    }

    /** What one timed run measured. */
    static final class Run {
        Stats total = new Stats();
        List<Stats> perThread = new ArrayList<>();
        double seconds;
        double serverCpu;
        /** Of which in the kernel (system calls, loopback TCP). */
        double serverSys;
        double clientCpu;
        long serverRssAfter;

        double rate() {
            return total.pairs / seconds;
        }

        /** Server CPU seconds per million pairs. */
        double cpuPerMillion() {
            return total.pairs == 0 ? Double.NaN : serverCpu / total.pairs * 1e6;
        }

        double clientCpuPerMillion() {
            return total.pairs == 0 ? Double.NaN : clientCpu / total.pairs * 1e6;
        }
    }
}
