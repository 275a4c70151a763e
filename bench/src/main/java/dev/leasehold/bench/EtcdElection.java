package dev.leasehold.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Election;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.election.LeaderResponse;

/**
 * The graceful handover of {@link ElectionBench} through etcd's own election API, as a Java
 * application uses it (jetcd {@link Election}, the concurrency package's server side): three
 * candidates, each on a client and an etcd lease of its own (TTL 15 s, kept alive by jetcd), each
 * a thread that campaigns ({@code campaign} returns once it leads) and, told to, resigns and
 * campaigns again; an observer on a fourth client ({@code observe}). A term is the leader key's
 * creation revision. Measured as for Leasehold: from the resign call to the next campaign's return,
 * and to the observer's event for the new leader.
 */
final class EtcdElection {

    private static final long TTL_SECONDS = 15;
    private static final long WAIT_SECONDS = 30;

    private EtcdElection() {
    }

    /** A term: which candidate, its leader key, when its campaign returned. */
    private record Started(int candidate, LeaderKey key, long nanos) {
    }

    static String graceful(String label, String endpoints, int rounds, int warmup) throws Exception {
        ByteSequence name = ByteSequence.from("bench-election/" + System.nanoTime(), StandardCharsets.UTF_8);
        BlockingQueue<Started> starts = new LinkedBlockingQueue<>();
        Map<Long, Long> observedAt = new ConcurrentHashMap<>();
        List<Client> clients = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        Semaphore[] resigned = new Semaphore[3];
        try {
            Client watcher = Client.builder().endpoints(endpoints.split(",")).build();
            clients.add(watcher);
            watcher.getElectionClient().observe(name, new Election.Listener() {
                @Override
                public void onNext(LeaderResponse r) {
                    observedAt.putIfAbsent(r.getKv().getCreateRevision(), System.nanoTime());
                }

                @Override
                public void onError(Throwable t) {
                    System.err.println("etcd observe failed: " + t);
                }

                @Override
                public void onCompleted() {
                    // closed
                }
            });
            for (int i = 0; i < 3; i++) {
                Client c = Client.builder().endpoints(endpoints.split(",")).build();
                clients.add(c);
                long lease = c.getLeaseClient().grant(TTL_SECONDS).get(WAIT_SECONDS, TimeUnit.SECONDS).getID();
                c.getLeaseClient().keepAlive(lease, new io.grpc.stub.StreamObserver<>() {
                    @Override
                    public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse r) {
                        // kept alive
                    }

                    @Override
                    public void onError(Throwable t) {
                        System.err.println("etcd keep-alive failed: " + t);
                    }

                    @Override
                    public void onCompleted() {
                        // closed
                    }
                });
                int index = i;
                resigned[i] = new Semaphore(0);
                ByteSequence proposal = ByteSequence.from("candidate-" + i, StandardCharsets.UTF_8);
                Thread t = new Thread(() -> {
                    try {
                        while (!Thread.currentThread().isInterrupted()) {
                            LeaderKey k = c.getElectionClient().campaign(name, lease, proposal).get().getLeader();
                            starts.add(new Started(index, k, System.nanoTime()));
                            resigned[index].acquire(); // until the driver resigned this term
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (Exception e) {
                        System.err.println("etcd candidate " + index + " failed: " + e);
                    }
                }, "etcd-candidate-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
            Histogram next = ElectionBench.histogram();
            Histogram observed = ElectionBench.histogram();
            Started current = take(starts);
            Election election = clients.get(1).getElectionClient();
            for (int r = 0; r < warmup + rounds; r++) {
                long t0 = System.nanoTime();
                election.resign(current.key()).get(WAIT_SECONDS, TimeUnit.SECONDS);
                resigned[current.candidate()].release(); // it campaigns again, at the back
                Started following = take(starts);
                long term = following.key().getRevision();
                long seen = ElectionBench.awaitObserved(observedAt, term);
                if (r >= warmup) {
                    next.recordValue(following.nanos() - t0);
                    observed.recordValue(Math.max(0, seen - t0));
                }
                current = following;
            }
            return ElectionBench.row(label, "graceful (resign)", rounds, next, observed);
        } finally {
            threads.forEach(Thread::interrupt);
            clients.forEach(Client::close);
        }
    }

    private static Started take(BlockingQueue<Started> starts) throws InterruptedException {
        Started s = starts.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (s == null) {
            throw new IllegalStateException("etcd: no campaign returned within " + WAIT_SECONDS + " s");
        }
        return s;
    }
}
