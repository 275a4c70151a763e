package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.registry.DecisionLog;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * A cluster node that stops serving (PROTOCOL.md section 10): every session it answered as leader
 * gets {@code X 9}, never {@code X 8}, whatever the session sends between the instant the node
 * stops serving and the instant the broadcast reaches it. The node is a {@link Gate} the test
 * drives by hand, so each interleaving of "stopped serving", "request read" and "broadcast" is
 * one deterministic step; the session pipeline (decoder, handler, outbox, a real registry) runs
 * on an {@link EmbeddedChannel}.
 */
class LeadershipLossTests {

    private static final String HINT = "leader=10.0.0.2:7420";
    private static final String PING = "50 00 00 00 00 00 00 00 07 0A";
    private static final String PONG = "50 00 00 00 00 00 00 00 07 0A";
    /** A wait 0, lease 30 s, owner 1, key k. */
    private static final String ACQUIRE = "41 00 1E 00 00 00 00 00 00 00 01 6B 0A";

    /** Hello, revision 1.4. */
    private static final String HELLO = "48 01 04 0A";
    /** An exclusive M: wait 200 ms, lease 30 s, owner 1, no value, key k. */
    private static final String M_200MS = "4D 00 00 00 00 C8 1E 00 00 00 00 00 00 00 01 00 00 00 00 6B 0A";

    private final Gate gate = new Gate();
    private final EmbeddedChannel ch = session(gate);

    @AfterEach
    void release() {
        ch.finishAndReleaseAll();
    }

    /**
     * The session's Ping was answered while this node led (the official client opens every
     * session with one). The node stops serving; before the broadcast reaches the session, its
     * first Acquire is read: {@code X 9}, since the session was served as leader.
     */
    @Test
    void aSessionAnsweredAsLeaderGetsX9ForARequestReadBeforeTheBroadcast() {
        gate.promote();
        assertThat(exchange(PING)).as("Pong from the leader").isEqualTo(PONG);

        gate.stepDown(); // stopped serving; the broadcast has not reached this session yet
        assertThat(exchange(ACQUIRE)).isEqualTo(x(9, HINT));
        assertThat(ch.isOpen()).isFalse();
    }

    /**
     * An Acquire read in the instant before the step-down is served in the epoch that ends: its
     * grant waits for a commit that never comes and is dropped, and the broadcast closes the
     * session with {@code X 9}.
     */
    @Test
    void aLockRequestReadJustBeforeTheStepDownIsDroppedAndTheSessionGetsX9() {
        gate.promote();
        assertThat(exchange(ACQUIRE)).as("the grant waits for its commit").isEmpty();

        gate.stepDown();
        broadcast();
        assertThat(outbound()).isEqualTo(x(9, HINT));
        assertThat(ch.isOpen()).isFalse();
    }

    /** A request of a served session read after the step-down: {@code X 9}, before the broadcast. */
    @Test
    void aServedSessionGetsX9ForALockRequestAfterTheStepDown() {
        gate.promote();
        gate.commitAll = true;
        assertThat(exchange(ACQUIRE)).startsWith("41 00 00 00 00 00 00 00 01");

        gate.stepDown();
        assertThat(exchange(ACQUIRE)).isEqualTo(x(9, HINT));
    }

    /** Once served in one epoch, never in the next: {@code X 9} even after this node leads again. */
    @Test
    void aSessionOfAnEarlierEpochIsNotServedInTheNext() {
        gate.promote();
        assertThat(exchange(PING)).isEqualTo(PONG);
        gate.stepDown();
        gate.promote();
        assertThat(exchange(ACQUIRE)).isEqualTo(x(9, HINT));
    }

    /** A follower answers Ping, then {@code X 8}: nothing of that session was executed. */
    @Test
    void aSessionNeverServedAsLeaderGetsX8() {
        assertThat(exchange(PING)).isEqualTo(PONG);
        assertThat(exchange(ACQUIRE)).isEqualTo(x(8, HINT));
    }

    /**
     * Revision 1.4 on a follower (PROTOCOL.md 14.5, 15.6): {@code H} is answered by every node,
     * like Ping; the first {@code M} or {@code W} of a session gets {@code X 8}, as an {@code A}.
     */
    @Test
    void aFollowerAnswersHelloAndRefusesMAndWWithX8() {
        assertThat(exchange(HELLO)).as("H on a follower").startsWith("48 01 04 00 03 E4 18 01 00 0A");
        assertThat(exchange(M_200MS)).isEqualTo(x(8, HINT));
        assertThat(ch.isOpen()).isFalse();

        EmbeddedChannel other = session(gate);
        EmbeddedWire.write(other, "57 00 00 00 00 00 00 00 01 6B 0A");
        other.runPendingTasks();
        assertThat(EmbeddedWire.written(other)).isEqualTo(x(8, HINT));
        other.finishAndReleaseAll();
    }

    /**
     * On the leader, {@code H} is answered and a {@code W} of a queued {@code M} is answered by that
     * acquire's {@code T}, in the read that carried the {@code W} (it logs nothing:
     * {@code WithdrawAndMillisecondWaitTests.aWithdrawLogsNothing}).
     */
    @Test
    void theLeaderAnswersHelloAndAWithdrawnAcquiresT() {
        gate.promote();
        gate.commitAll = true;
        assertThat(exchange(ACQUIRE)).startsWith("41 00 00 00 00 00 00 00 01");
        assertThat(exchange(M_200MS.replace("00 00 00 00 C8", "00 00 00 27 10").replace(" 01 00 00 00 00 6B", " 02 00 00 00 00 6B")))
                .as("owner 2 queues for 10 s").isEmpty();
        assertThat(exchange(HELLO)).as("H on the leader").isEqualTo("48 01 04 00 03 E4 18 01 00 0A");
        assertThat(exchange("57 00 00 00 00 00 00 00 02 6B 0A")).isEqualTo("54 00 00 00 00 00 00 00 02 0A");
    }

    /**
     * PROTOCOL.md 17.6: a {@code V} on the leader is answered once its entry has committed, {@code V}
     * and {@code N} alike, as a Release; a follower answers the first {@code V} of a session {@code X 8}.
     */
    @Test
    void aVIsAnsweredAfterItsCommitAndAFollowerAnswersItX8() {
        gate.promote();
        gate.commitAll = true;
        assertThat(exchange(ACQUIRE)).startsWith("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8");
        gate.commitAll = false;
        assertThat(exchange("56 00 00 00 00 00 00 03 E8 00 02 6E 31 6B 0A")).as("V of token 1000: not before its commit")
                .isEmpty();
        assertThat(exchange("56 00 00 00 00 00 00 03 E9 00 00 6B 0A")).as("N of token 1001: not before its commit")
                .isEmpty();
        gate.commitWaiting();
        ch.runPendingTasks();
        assertThat(outbound()).isEqualTo("56 00 00 00 00 00 00 03 E8 0A 4E 00 00 00 00 00 00 03 E9 0A");

        EmbeddedChannel follower = session(new Gate());
        EmbeddedWire.write(follower, "56 00 00 00 00 00 00 03 E8 00 02 6E 31 6B 0A");
        follower.runPendingTasks();
        assertThat(EmbeddedWire.written(follower)).isEqualTo(x(8, HINT));
        follower.finishAndReleaseAll();
    }

    // ------------------------------------------------------------------ fixture

    /** A cluster node as the server sees it, driven by the test. */
    static final class Gate implements ServingGate {

        private long epochs;
        private volatile long servingEpoch;
        /** Everything committed at once (else nothing commits until the test says so). */
        boolean commitAll;
        private final List<Committed> waiting = new ArrayList<>();

        void promote() {
            servingEpoch = ++epochs;
        }

        /** Everything proposed so far commits: the answers waiting for it go. */
        void commitWaiting() {
            List<Committed> now = new ArrayList<>(waiting);
            waiting.clear();
            now.forEach(c -> c.run(true));
        }

        /** Stops serving: the answers waiting for a commit are dropped. */
        void stepDown() {
            servingEpoch = 0;
            List<Committed> dropped = new ArrayList<>(waiting);
            waiting.clear();
            dropped.forEach(c -> c.run(false));
        }

        @Override
        public long servingEpoch() {
            return servingEpoch;
        }

        @Override
        public String leaderHint() {
            return HINT;
        }

        @Override
        public long barrier() {
            return 0;
        }

        @Override
        public boolean committed(long barrier) {
            return servingEpoch != 0 && commitAll;
        }

        @Override
        public void whenCommitted(long barrier, Committed then) {
            if (servingEpoch == 0) {
                then.run(false);
            } else if (commitAll) {
                then.run(true);
            } else {
                waiting.add(then);
            }
        }
    }

    private static EmbeddedChannel session(ServingGate gate) {
        AtomicLong tokens = new AtomicLong(999);
        LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), System::nanoTime,
                tokens::incrementAndGet, LeaseHorizon.UNBOUNDED, new SessionNotifier(), RegistryObserver.NONE,
                DecisionLog.NONE);
        RequestDecoder decoder = new RequestDecoder(512, TimeUnit.SECONDS.toNanos(10), System::nanoTime, 1024, 255_000,
                256);
        SessionHandler handler = new SessionHandler(new SessionHandler.Shared(registry, System::nanoTime,
                new ServerStats(), null, new ProtocolErrorLog(System::nanoTime), TimeUnit.SECONDS.toNanos(10),
                Outboxes.commitGated(gate)), decoder);
        return new EmbeddedChannel(decoder, handler);
    }

    /** What {@link LeaseholdServer#leadershipLost()} runs on this session's event loop. */
    private void broadcast() {
        var ctx = ch.pipeline().context(SessionHandler.class);
        ((SessionHandler) ctx.handler()).stoppedServing(ctx);
        ch.runPendingTasks();
    }

    private String exchange(String requestHex) {
        EmbeddedWire.write(ch, requestHex);
        ch.runPendingTasks();
        return outbound();
    }

    private String outbound() {
        return EmbeddedWire.written(ch);
    }

    private static String x(int code, String message) {
        return String.format("58 %02X ", code) + HexFormat.ofDelimiter(" ").withUpperCase()
                .formatHex(message.getBytes(StandardCharsets.US_ASCII)) + " 0A";
    }
}
