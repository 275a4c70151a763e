package dev.leasehold.bench;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;

/**
 * etcd's lock as a Java application uses it through jetcd: every load thread shares ONE
 * {@link Client}; each thread holds one etcd lease, granted when the thread starts and kept alive
 * by jetcd's keep-alive stream (so a crashed thread's locks end with its lease, as Leasehold's end
 * with theirs); acquire is {@code Lock.lock(key, lease)} and release {@code Lock.unlock(ownerKey)}.
 * The fencing token is the revision at which the lock was granted (etcd's documented way to fence).
 *
 * <p>etcd has no try-lock: {@code lock} waits until it is granted. A bounded wait is the future's
 * timeout, and a wait that runs out must also remove the queued request from etcd, or it would be
 * granted later to nobody: the thread revokes its lease (which deletes its pending lock key) and
 * takes a new one. W1 runs on each thread's own keys, so its "wait 0" never waits.
 */
final class EtcdConn implements LockConn {

    /** How long an uncontended "wait 0" may take before it counts as a failure of the run. */
    private static final int NO_WAIT_BOUND_SECONDS = 10;

    private final Client client;
    private final long ttlSeconds;
    private long leaseId;
    private CloseableClient keepAlive;
    private ByteSequence ownerKey;

    EtcdConn(Client client, long ttlSeconds) throws IOException {
        this.client = client;
        this.ttlSeconds = ttlSeconds;
        newLease();
    }

    private void newLease() throws IOException {
        leaseId = get(client.getLeaseClient().grant(ttlSeconds), NO_WAIT_BOUND_SECONDS).getID();
        keepAlive = client.getLeaseClient().keepAlive(leaseId, new StreamObserver<LeaseKeepAliveResponse>() {
            @Override
            public void onNext(LeaseKeepAliveResponse r) {
                // kept alive
            }

            @Override
            public void onError(Throwable t) {
                System.err.println("etcd keep-alive of lease " + leaseId + " failed: " + t);
            }

            @Override
            public void onCompleted() {
                // closed by us
            }
        });
    }

    @Override
    public long acquire(byte[] key, int waitSeconds, int leaseSeconds) throws IOException {
        int bound = waitSeconds > 0 ? waitSeconds : NO_WAIT_BOUND_SECONDS;
        try {
            LockResponse r = client.getLockClient().lock(ByteSequence.from(key), leaseId).get(bound, TimeUnit.SECONDS);
            ownerKey = r.getKey();
            return r.getHeader().getRevision();
        } catch (TimeoutException e) {
            if (waitSeconds == 0) {
                throw new IOException("etcd: an uncontended lock took more than " + bound + " s");
            }
            dropLease(); // the queued lock key goes with the lease
            newLease();
            return TIMED_OUT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IOException("etcd lock: " + e.getCause(), e.getCause());
        }
    }

    @Override
    public boolean release(byte[] key, long token) throws IOException {
        ByteSequence owner = ownerKey;
        ownerKey = null;
        if (owner == null) {
            throw new IOException("release without a held lock");
        }
        get(client.getLockClient().unlock(owner), NO_WAIT_BOUND_SECONDS);
        return true;
    }

    @Override
    public void acquireBatch(byte[][] keys, int from, int n, int leaseSeconds, long[] tokensOut) {
        throw new UnsupportedOperationException("jetcd Lock: one lock call at a time per thread in this benchmark");
    }

    @Override
    public int releaseBatch(byte[][] keys, int from, int n, long[] tokens) {
        throw new UnsupportedOperationException("jetcd Lock: one lock call at a time per thread in this benchmark");
    }

    /** A linearizable read of a key that does not exist: etcd's cheapest round trip through the leader. */
    @Override
    public void ping() throws IOException {
        get(client.getKVClient().get(ByteSequence.from(new byte[] {'p'})), NO_WAIT_BOUND_SECONDS);
    }

    private void dropLease() throws IOException {
        keepAlive.close();
        get(client.getLeaseClient().revoke(leaseId), NO_WAIT_BOUND_SECONDS);
    }

    @Override
    public void close() throws IOException {
        dropLease();
    }

    private static <T> T get(java.util.concurrent.CompletableFuture<T> f, int seconds) throws IOException {
        try {
            return f.get(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IOException("etcd: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("etcd: no answer in " + seconds + " s", e);
        }
    }
}
