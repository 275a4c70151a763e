package dev.leasehold.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.params.SetParams;

/**
 * The usual single-instance Redis lock with Jedis: acquire is {@code SET key token NX PX lease},
 * release is a Lua compare-and-delete (so a holder never deletes someone else's lock). A wait is
 * client-side polling, as Redis has no queue: retry SET NX every {@code pollMicros} until the wait
 * runs out (no FIFO, no fairness).
 */
final class RedisConn implements LockConn {

    static final String UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

    private final Jedis jedis;
    private final byte[] unlockSha;
    private final long pollMicros;
    private long seq;
    private final long tokenBase;

    RedisConn(String host, int port, long pollMicros) {
        jedis = new Jedis(host, port, 5000, 30_000);
        unlockSha = jedis.scriptLoad(UNLOCK).getBytes(StandardCharsets.US_ASCII);
        this.pollMicros = pollMicros;
        tokenBase = (System.nanoTime() & 0x7FFF_FFFFL) << 31 ^ ((long) System.identityHashCode(this) << 20);
    }

    Jedis jedis() {
        return jedis;
    }

    private long nextToken() {
        return (tokenBase + ++seq) & Long.MAX_VALUE | 1;
    }

    static byte[] value(long token) {
        byte[] b = new byte[8];
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) token;
            token >>>= 8;
        }
        return b;
    }

    @Override
    public long acquire(byte[] key, int waitSeconds, int leaseSeconds) throws IOException {
        long token = nextToken();
        byte[] value = value(token);
        SetParams params = SetParams.setParams().nx().px(leaseSeconds * 1000L);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitSeconds);
        while (true) {
            if ("OK".equals(jedis.set(key, value, params))) {
                return token;
            }
            if (waitSeconds == 0 || System.nanoTime() - deadline >= 0) {
                return TIMED_OUT;
            }
            if (pollMicros > 0) {
                try {
                    TimeUnit.MICROSECONDS.sleep(pollMicros);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
            }
        }
    }

    @Override
    public boolean release(byte[] key, long token) {
        Object r = jedis.evalsha(unlockSha, 1, key, value(token));
        return r instanceof Long l && l == 1L;
    }

    @Override
    public void acquireBatch(byte[][] keys, int from, int n, int leaseSeconds, long[] tokensOut) {
        Pipeline p = jedis.pipelined();
        List<Response<String>> rs = new ArrayList<>(n);
        SetParams params = SetParams.setParams().nx().px(leaseSeconds * 1000L);
        for (int i = 0; i < n; i++) {
            tokensOut[i] = nextToken();
            rs.add(p.set(keys[from + i], value(tokensOut[i]), params));
        }
        p.sync();
        for (int i = 0; i < n; i++) {
            if (!"OK".equals(rs.get(i).get())) {
                tokensOut[i] = TIMED_OUT;
            }
        }
    }

    @Override
    public int releaseBatch(byte[][] keys, int from, int n, long[] tokens) {
        Pipeline p = jedis.pipelined();
        List<Response<Object>> rs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            if (tokens[i] > 0) {
                rs.add(p.evalsha(unlockSha, 1, keys[from + i], value(tokens[i])));
            }
        }
        p.sync();
        int released = 0;
        for (Response<Object> r : rs) {
            if (r.get() instanceof Long l && l == 1L) {
                released++;
            }
        }
        return released;
    }

    @Override
    public void ping() {
        jedis.ping();
    }

    @Override
    public void close() {
        jedis.close();
    }
}
