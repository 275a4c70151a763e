package dev.leasehold.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's lock as an application uses it: every load thread shares ONE
 * {@link RedissonClient}; acquire is {@code tryLock(wait, lease, SECONDS)} on an {@link RLock}
 * (non-fair: pub/sub wake-up, no queue) or an {@code RFairLock} (a FIFO queue kept in Redis), and
 * release is {@code unlock()} from the same thread (Redisson locks belong to the thread).
 */
final class RedissonConn implements LockConn {

    private final RedissonClient redisson;
    private final boolean fair;
    private RLock held;
    private long seq;

    RedissonConn(RedissonClient redisson, boolean fair) {
        this.redisson = redisson;
        this.fair = fair;
    }

    @Override
    public long acquire(byte[] key, int waitSeconds, int leaseSeconds) throws IOException {
        String name = new String(key, StandardCharsets.UTF_8);
        RLock lock = fair ? redisson.getFairLock(name) : redisson.getLock(name);
        try {
            if (lock.tryLock(waitSeconds, leaseSeconds, TimeUnit.SECONDS)) {
                held = lock;
                return ++seq;
            }
            return TIMED_OUT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    @Override
    public boolean release(byte[] key, long token) throws IOException {
        RLock lock = held;
        held = null;
        if (lock == null) {
            throw new IOException("release without a held lock");
        }
        lock.unlock();
        return true;
    }

    @Override
    public void acquireBatch(byte[][] keys, int from, int n, int leaseSeconds, long[] tokensOut) {
        throw new UnsupportedOperationException("Redisson locks: no pipelined batch in this benchmark");
    }

    @Override
    public int releaseBatch(byte[][] keys, int from, int n, long[] tokens) {
        throw new UnsupportedOperationException("Redisson locks: no pipelined batch in this benchmark");
    }

    @Override
    public void ping() {
        throw new UnsupportedOperationException("Redisson: no ping in this benchmark");
    }

    @Override
    public void close() {
        // the shared client outlives its views
    }
}
