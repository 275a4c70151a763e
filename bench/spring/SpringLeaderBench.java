import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.spring.integration.LeaseholdLeaderInitiator;
import dev.leasehold.spring.integration.LeaseholdLockRegistry;

/**
 * Spring Integration leader election through Leasehold, both ways a Spring user can (run by
 * {@code bench/spring-leader.sh}; BENCHMARKS.md W7): three initiators for one role, each on a
 * client of its own, and a driver that makes the leader {@code yield()} and measures the time to
 * the next candidate's {@code onGranted}. {@code LeaseholdLeaderInitiator} waits in the key's queue;
 * SI's {@code LockRegistryLeaderInitiator} (default heart beat 500 ms, busy wait 50 ms) over a
 * {@code LeaseholdLockRegistry} polls {@code tryLock}. Every loop is bounded by its round count and
 * every wait by a timeout.
 *
 * <p>Usage: {@code SpringLeaderBench HOST:PORT LEASEHOLD_ROUNDS SI_ROUNDS}
 */
public final class SpringLeaderBench {

    private static final long WAIT_SECONDS = 30;

    /** A grant: whose, when, and its context (to yield). */
    private record Granted(int candidate, long nanos, Context context) {
    }

    /** One initiator under test: started with a candidate, stopped at the end. */
    private interface Initiator {
        void stop();
    }

    public static void main(String[] args) throws Exception {
        String server = args[0];
        int leaseholdRounds = Integer.parseInt(args[1]);
        int siRounds = Integer.parseInt(args[2]);
        System.out.println("| initiator | handovers | yield → next onGranted p50 / p99 / max (ms) |");
        System.out.println("|---|---:|---|");
        run("LeaseholdLeaderInitiator (queue)", server, leaseholdRounds, (c) -> {
            LeaseholdLeaderInitiator i = new LeaseholdLeaderInitiator(c.client, c.candidate);
            i.start();
            return i::stop;
        });
        run("LockRegistryLeaderInitiator over LeaseholdLockRegistry (tryLock heart beat)", server, siRounds, (c) -> {
            LockRegistryLeaderInitiator i = new LockRegistryLeaderInitiator(new LeaseholdLockRegistry(c.client), c.candidate);
            i.start();
            return i::stop;
        });
    }

    /** What an initiator is made from. */
    private record Parts(LeaseholdClient client, DefaultCandidate candidate) {
    }

    private static void run(String label, String server, int rounds, Function<Parts, Initiator> make) throws Exception {
        String role = "bench-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        BlockingQueue<Granted> grants = new LinkedBlockingQueue<>();
        List<LeaseholdClient> clients = new ArrayList<>();
        List<Initiator> initiators = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                LeaseholdClient client = LeaseholdClient.create(server);
                clients.add(client);
                int index = i;
                DefaultCandidate candidate = new DefaultCandidate("node-" + i, role) {
                    @Override
                    public void onGranted(Context ctx) {
                        grants.add(new Granted(index, System.nanoTime(), ctx));
                    }
                };
                initiators.add(make.apply(new Parts(client, candidate)));
            }
            long[] samples = new long[rounds];
            Granted current = take(grants);
            int warmup = Math.max(1, rounds / 10);
            for (int r = -warmup; r < rounds; r++) {
                long t0 = System.nanoTime();
                current.context().yield();
                Granted next = take(grants);
                if (r >= 0) {
                    samples[r] = next.nanos() - t0;
                }
                current = next;
            }
            java.util.Arrays.sort(samples);
            System.out.printf("| %s | %d | %.2f / %.2f / %.2f |%n", label, rounds, samples[rounds / 2] / 1e6,
                    samples[Math.min(rounds - 1, (int) Math.ceil(rounds * 0.99) - 1)] / 1e6, samples[rounds - 1] / 1e6);
        } finally {
            initiators.forEach(Initiator::stop);
            clients.forEach(LeaseholdClient::close);
        }
    }

    private static Granted take(BlockingQueue<Granted> grants) throws InterruptedException {
        Granted g = grants.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (g == null) {
            throw new IllegalStateException("nobody was granted leadership within " + WAIT_SECONDS + " s");
        }
        return g;
    }
}
