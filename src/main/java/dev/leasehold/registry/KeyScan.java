package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.OptionalLong;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Read-only looks at the keys for operators, gauges and a graceful stop: one key
 * ({@link #inspect}), the top of all keys ({@link #top}), and walks for the longest queue and the
 * latest lease end. Each walk holds a lane's lock only for that lane (or, for {@link #top}, a
 * chunk of it), so it is for a diagnostic, gauge or stop thread, never a hot path.
 */
final class KeyScan {

    private final Lanes lanes;
    private final KeyMachine machine;

    KeyScan(Lanes lanes, KeyMachine machine) {
        this.lanes = lanes;
        this.machine = machine;
    }

    /** The facade's {@code inspect}. */
    KeyView inspect(byte[] key, int maxWaits) {
        return machine.onKey(key, (lane, s, hash, now) -> s == null ? KeyView.free(key) : KeyView.of(s, now, maxWaits));
    }

    /** The facade's {@code top}. */
    TopKeys top(int n, int chunk, int maxWaits, Runnable betweenChunks) {
        if (n < 1 || chunk < 1) {
            throw new IllegalArgumentException("n and chunk must be at least 1: " + n + ", " + chunk);
        }
        long started = lanes.nanoTime();
        PriorityQueue<Candidate> queues = new PriorityQueue<>(Comparator.comparingLong(Candidate::score));
        PriorityQueue<Candidate> oldest = new PriorityQueue<>(Comparator.comparingLong(Candidate::score));
        long scanned = 0;
        for (Lane l : lanes.all()) {
            int from = 0;
            while (from >= 0) {
                int start = from;
                long[] seen = new long[1];
                from = lanes.inLane(l, (lane, now) -> lane.keys.scan(start, chunk, s -> {
                    seen[0]++;
                    if (s.waiters > 0) {
                        offer(queues, s, s.waiters, n);
                    }
                    if (s.isHeld()) {
                        offer(oldest, s, now - s.grantNanos, n);
                    }
                }, lane.lock::hasQueuedThreads)); // a request waits: let it in after at most 64 slots
                scanned += seen[0];
                betweenChunks.run();
            }
        }
        return new TopKeys(views(queues, maxWaits), views(oldest, maxWaits), scanned,
                lanes.nanoTime() - started);
    }

    /** A key that may make the top, with its score (higher is better) when it was seen. */
    private record Candidate(KeyState state, long score) {
    }

    /** Allocates only for a key that enters the top: a walk over a million keys makes a handful of objects. */
    private static void offer(PriorityQueue<Candidate> top, KeyState s, long score, int n) {
        if (top.size() < n) {
            top.add(new Candidate(s, score));
        } else if (score > top.peek().score()) {
            top.poll();
            top.add(new Candidate(s, score));
        }
    }

    /** Best first, each key once, each read again under its lane lock. */
    private List<KeyView> views(PriorityQueue<Candidate> top, int maxWaits) {
        List<Candidate> best = new ArrayList<>(top);
        best.sort(Comparator.comparingLong(Candidate::score).reversed());
        Set<KeyState> once = Collections.newSetFromMap(new IdentityHashMap<>());
        List<KeyView> out = new ArrayList<>(best.size());
        for (Candidate c : best) {
            if (once.add(c.state())) {
                out.add(inspect(c.state().key, maxWaits));
            }
        }
        return out;
    }

    /** The facade's {@code longestQueue}. */
    int longestQueue() {
        int[] max = {0};
        lanes.forEachLane((lane, now) -> {
            for (KeyState s : lane.keys.snapshot()) {
                max[0] = Math.max(max[0], s.waiters);
            }
            return null;
        });
        return max[0];
    }

    /** The facade's {@code latestHeldLeaseEnd}: every active hold, exclusive or shared. */
    OptionalLong latestHeldLeaseEnd() {
        long[] latest = {0};
        boolean[] any = {false};
        lanes.forEachLane((lane, now) -> {
            for (KeyState s : lane.keys.snapshot()) {
                latest(s, now, latest, any);
                for (SharedSlot g = s.sharedFirst; g != null; g = g.next) {
                    latest(g, now, latest, any);
                }
            }
            return null;
        });
        return any[0] ? OptionalLong.of(latest[0]) : OptionalLong.empty();
    }

    private static void latest(Hold h, long now, long[] latest, boolean[] any) {
        if (h.isActive() && !h.leaseOver(now) && (!any[0] || h.leaseEndNanos - latest[0] > 0)) {
            latest[0] = h.leaseEndNanos;
            any[0] = true;
        }
    }
}
