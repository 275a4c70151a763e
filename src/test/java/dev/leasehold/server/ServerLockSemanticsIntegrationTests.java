package dev.leasehold.server;


import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.extension.RegisterExtension;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.testing.LockDriver;
import dev.leasehold.testing.LockSemanticsContract;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;

/**
 * The lock-semantics contract against the real server over real sockets (port 0). Time is real
 * here: a test that needs a 1 s lease to end waits for the answer that ends it, bounded; none
 * sleeps. A request is known to be queued once a Ping sent after it is answered (a session's
 * frames are handled in order) without its answer, except a wait = 0 Acquire, which never
 * queues: its {@code A} may wait for the lease horizon and come after the Pong. A closed
 * session's waiters are known dropped once the registry counts them out.
 */
class ServerLockSemanticsIntegrationTests implements LockSemanticsContract {

    @RegisterExtension
    static final TestServer.PerClass server = TestServer.perClass();
    private static final AtomicLong NONCES = new AtomicLong(1);

    private final LockDriver driver = new LockDriver() {
        @Override
        public Conn open() throws Exception {
            RawClient raw = new RawClient(server.port());
            Deque<Answer> later = new ArrayDeque<>();
            return new Conn() {
                @Override
                public Answer call(Request r) throws Exception {
                    long nonce = NONCES.getAndIncrement();
                    raw.send(r, new Request.Ping(nonce));
                    Answer immediate = null;
                    while (true) {
                        Answer a = raw.next();
                        if (a.equals(new Answer.Pong(nonce)) && !(r instanceof Request.Ping p && p.nonce() == nonce)) {
                            if (immediate == null && waitSeconds(r) == 0) {
                                // wait 0 never queues: its A may only be waiting for the lease
                                // horizon's fsync (PROTOCOL.md 8), which a Pong can overtake
                                immediate = awaitAnswerTo(r);
                            }
                            return immediate;
                        }
                        if (immediate == null && answers(r, a)) {
                            immediate = a;
                        } else {
                            later.add(a);
                        }
                    }
                }

                private Answer awaitAnswerTo(Request q) throws Exception {
                    while (true) {
                        Answer a = raw.next();
                        if (answers(q, a)) {
                            return a;
                        }
                        later.add(a);
                    }
                }

                @Override
                public Answer await(long maxMillis) throws Exception {
                    // the bound is the test's margin, not a claim: timing is asserted by the caller
                    return later.isEmpty() ? raw.next(maxMillis + 2_000) : later.poll();
                }

                @Override
                public boolean nothingYet() throws Exception {
                    long nonce = NONCES.getAndIncrement();
                    raw.send(new Request.Ping(nonce));
                    for (Answer a = raw.next(); !a.equals(new Answer.Pong(nonce)); a = raw.next()) {
                        later.add(a);
                    }
                    return later.isEmpty();
                }

                @Override
                public void close() throws Exception {
                    raw.close();
                }
            };
        }

        @Override
        public long nowMillis() {
            return System.nanoTime() / 1_000_000;
        }

        @Override
        public long lateSlackMillis() {
            return 1_500;
        }

        @Override
        public void awaitWaiters(int n) {
            LockRegistry registry = server.bean(LockRegistry.class);
            Wait.until(n + " waiters queued on the server (port " + server.port() + ")", Duration.ofSeconds(10), registry::waiters, w -> w == n);
        }

        @Override
        public void close() {
        }
    };

    @Override
    public LockDriver driver() {
        return driver;
    }

    /** An acquire's wait in whole seconds (an {@code M} of 1 to 999 ms counts as 1: it may queue); -1 for other requests. */
    private static int waitSeconds(Request r) {
        return r instanceof Request.Acquire q ? q.waitSeconds()
                : r instanceof Request.SharedAcquire s ? s.waitSeconds()
                : r instanceof Request.MilliAcquire m ? (int) Math.min(255, (m.waitMillis() + 999) / 1000) : -1;
    }

    /**
     * Whether {@code a} is the immediate answer to {@code r} (Acquire and shared acquire by
     * owner, the others by token or nonce).
     */
    private static boolean answers(Request r, Answer a) {
        long owner = r instanceof Request.Acquiring q ? q.owner() : -1;
        if (owner != -1) {
            return a instanceof Answer.Acquired g && g.owner() == owner
                    || a instanceof Answer.TimedOut t && t.owner() == owner
                    || a instanceof Answer.Busy b && b.owner() == owner
                    || a instanceof Answer.LimitMismatch m && m.owner() == owner;
        }
        return !(a instanceof Answer.Acquired || a instanceof Answer.TimedOut || a instanceof Answer.Busy
                || a instanceof Answer.LimitMismatch);
    }
}
