package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * A watch through the session on an {@link EmbeddedChannel} (PROTOCOL.md 16.3, 16.4): the event
 * of the session's own change follows that change's answer, and while the channel is not writable
 * one event is kept, a later one replacing it flagged coalesced, a first event keeping cause 0.
 * The channel's writability is switched by hand (Netty's user-defined writability bit).
 */
class SessionWatchTests {

    /**
     * A lease horizon on disk at once, unless {@link #hold} is set: then grants wait for a write the
     * test completes ({@link #written}).
     */
    static final class HeldHorizon implements LeaseHorizon {
        boolean hold;
        boolean unwritten;
        final List<Durable> waiting = new ArrayList<>();

        @Override
        public Approval approve(long nowNanos, long leaseEndNanos) {
            if (!hold) {
                return Approval.ON_DISK;
            }
            unwritten = true;
            return Approval.AFTER_WRITE;
        }

        @Override
        public void whenDurable(Durable then) {
            if (unwritten) {
                waiting.add(then);
            } else {
                then.then(true);
            }
        }

        void written() {
            unwritten = false;
            List<Durable> due = new ArrayList<>(waiting);
            waiting.clear();
            due.forEach(d -> d.then(true));
        }
    }

    final ServerStats stats = new ServerStats();
    final HeldHorizon horizon = new HeldHorizon();
    final EmbeddedChannel ch = pipeline();

    EmbeddedChannel pipeline() {
        AtomicLong tokens = new AtomicLong(999);
        LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), System::nanoTime,
                tokens::incrementAndGet, horizon, new SessionNotifier(), RegistryObserver.NONE);
        RequestDecoder decoder = new RequestDecoder(512, TimeUnit.SECONDS.toNanos(10), System::nanoTime);
        return new EmbeddedChannel(decoder, new SessionHandler(new SessionHandler.Shared(registry, System::nanoTime,
                stats, null, new ProtocolErrorLog(System::nanoTime), TimeUnit.SECONDS.toNanos(10),
                Outboxes.direct()), decoder));
    }

    String exchange(String hex) {
        EmbeddedWire.write(ch, hex);
        ch.runPendingTasks(); // events leave in tasks on the session's loop
        return EmbeddedWire.written(ch);
    }

    void writable(boolean on) {
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, on);
        ch.runPendingTasks();
    }

    /** PROTOCOL.md 16.3.4: a grant whose A waits for the lease horizon's fsync is shown after it, after the A. */
    @Test
    void anEventWaitsForTheHorizonWriteItsGrantsAnswerWaitsFor() {
        exchange("4F 00 00 00 00 00 00 00 05 6B 0A");
        horizon.hold = true;
        assertThat(exchange("41 00 1E 00 00 00 00 00 00 00 01 6B 0A")).as("neither the A nor the event yet").isEmpty();
        horizon.written();
        ch.runPendingTasks();
        assertThat(EmbeddedWire.written(ch)).isEqualTo(
                "41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8 00 00 00 00 0A"
                + " 4F 00 00 00 00 00 00 00 05 48 01 00 00 00 00 00 00 00 03 E8 00 01 00 00 00 00 0A");
        ch.finishAndReleaseAll();
    }

    /** PROTOCOL.md 16.7: events decided before the session's X are written before it, none after. */
    @Test
    void eventsDecidedBeforeAnXAreWrittenBeforeIt() {
        // O k, A k and an unknown op in one read: the A's event is still on its way when the X is decided.
        String out = exchange("4F 00 00 00 00 00 00 00 05 6B 0A 41 00 1E 00 00 00 00 00 00 00 01 6B 0A 5A");
        // The batch's A, then the watch's events in order (its first, then the grant), then the X.
        assertThat(out).isEqualTo("41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8 00 00 00 00 0A"
                + " 4F 00 00 00 00 00 00 00 05 46 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0A"
                + " 4F 00 00 00 00 00 00 00 05 48 01 00 00 00 00 00 00 00 03 E8 00 01 00 00 00 00 0A"
                + " " + EmbeddedWire.hexOf(Answers.error(ch.alloc(), dev.leasehold.protocol.ErrorCode.UNKNOWN_OP,
                        "unknown op 0x5A")));
        assertThat(stats.openWatches()).isZero();
        ch.finishAndReleaseAll();
    }

    @Test
    void theEventOfTheSessionsOwnGrantFollowsItsAnswer() {
        // O k as watch 5: its first event, free, no token
        assertThat(exchange("4F 00 00 00 00 00 00 00 05 6B 0A"))
                .isEqualTo("4F 00 00 00 00 00 00 00 05 46 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 0A");
        // A k, owner 1: the A (token 1000) first, then the event H 1000 cause 1
        assertThat(exchange("41 00 1E 00 00 00 00 00 00 00 01 6B 0A")).isEqualTo(
                "41 00 00 00 00 00 00 00 01 00 00 00 00 00 00 03 E8 00 00 00 00 0A"
                + " 4F 00 00 00 00 00 00 00 05 48 01 00 00 00 00 00 00 00 03 E8 00 01 00 00 00 00 0A");
        ch.finishAndReleaseAll();
    }

    @Test
    void whileNotWritableOneEventIsKeptAndAKeptFirstEventKeepsCauseZero() {
        writable(false);
        assertThat(exchange("4F 00 00 00 00 00 00 00 05 6B 0A")).as("the first event is kept").isEmpty();
        exchange("41 00 1E 00 00 00 00 00 00 00 01 6B 0A"); // the A is written regardless (not an event)
        exchange("52 00 00 00 00 00 00 03 E8 6B 0A");
        exchange("41 00 1E 00 00 00 00 00 00 00 02 6B 0A");
        assertThat(ch.pipeline().get(SessionHandler.class).keptWatchEvents()).isEqualTo(1);
        assertThat(stats.eventsCoalesced()).isEqualTo(3);
        writable(true);
        assertThat(EmbeddedWire.written(ch)).as("H 1001, cause 0 (still the first event), flags 1")
                .isEqualTo("4F 00 00 00 00 00 00 00 05 48 00 01 00 00 00 00 00 00 03 E9 00 01 00 00 00 00 0A");
        assertThat(ch.pipeline().get(SessionHandler.class).keptWatchEvents()).isZero();
        // Written at once again; the next kept one takes the cause of its newest change.
        assertThat(exchange("52 00 00 00 00 00 00 03 E9 6B 0A")).isEqualTo("52 00 00 00 00 00 00 03 E9 0A"
                + " 4F 00 00 00 00 00 00 00 05 46 02 00 00 00 00 00 00 00 03 E9 00 00 00 00 00 00 0A");
        writable(false);
        exchange("41 00 1E 00 00 00 00 00 00 00 03 6B 0A");
        exchange("52 00 00 00 00 00 00 03 EA 6B 0A");
        writable(true);
        assertThat(EmbeddedWire.written(ch)).as("F 1002 cause 2, flags 1: the grant in between is folded in")
                .isEqualTo("4F 00 00 00 00 00 00 00 05 46 02 01 00 00 00 00 00 00 03 EA 00 00 00 00 00 00 0A");
        // U: at once, and nothing of the watch after it.
        assertThat(exchange("55 00 00 00 00 00 00 00 05 0A")).isEqualTo("55 00 00 00 00 00 00 00 05 0A");
        assertThat(exchange("41 00 1E 00 00 00 00 00 00 00 04 6B 0A")).startsWith("41").hasSize(22 * 3 - 1);
        assertThat(stats.openWatches()).isZero();
        ch.finishAndReleaseAll();
    }
}
