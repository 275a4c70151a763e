package dev.leasehold.cluster;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.HoldMode;
import dev.leasehold.registry.AcquireResult;
import dev.leasehold.registry.BusyReason;
import dev.leasehold.registry.LeaseHorizon;
import dev.leasehold.registry.LockRegistry;
import dev.leasehold.registry.NanoClock;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.registry.RegistryObserver;
import dev.leasehold.registry.SessionHandle;
import dev.leasehold.registry.TokenSource;
import dev.leasehold.testing.support.Wait;

/**
 * The proposer against a sink whose commits the test completes by hand: answers wait for their
 * commit and are released in order, decisions made while a batch is in flight form the next
 * batch, and nothing is answered or issued once the node stops serving.
 */
class ProposerTests {

    private final LinkedBlockingQueue<CompletableFuture<Object>> proposals = new LinkedBlockingQueue<>();
    private final List<List<Command>> batches = new CopyOnWriteArrayList<>();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final Proposer proposer = new Proposer(bytes -> {
        batches.add(CommandCodec.decode(bytes));
        CompletableFuture<Object> f = new CompletableFuture<>();
        proposals.add(f);
        return f;
    }, 256, 1, 1000, NanoClock.SYSTEM, nanos -> { }, failures::add);

    @AfterEach
    void stop() {
        proposer.stop();
    }

    private static byte[] key(String k) {
        return k.getBytes(UTF_8);
    }

    /**
     * PROTOCOL.md section 11: with everything committed, a Check still waits for an entry of its
     * own, proposed after it arrived; its commit is the proof that this node still led then.
     */
    @Test
    void aCheckWaitsForANewEntryEvenWhenEverythingHasCommitted() throws Exception {
        proposer.start();
        proposer.open(0);
        proposer.granted(key("a"), 1, 10, HoldMode.EXCLUSIVE, null);
        proposals.poll(5, TimeUnit.SECONDS).complete("ok");
        Wait.until("the proposer's barrier committed (committed?)", Duration.ofSeconds(10), () -> proposer.committed(proposer.barrier()),
                committed -> committed);

        proposer.checked(key("a"), 1);
        long barrier = proposer.barrier();
        assertThat(proposer.committed(barrier)).as("the C must not leave before a fresh commit").isFalse();
        CompletableFuture<Object> entry = proposals.poll(5, TimeUnit.SECONDS);
        assertThat(batches.get(1)).hasSize(1).first().isInstanceOf(Command.Check.class);
        entry.complete("ok");
        Wait.until("barrier " + barrier + " committed after the Check's entry (committed?)", Duration.ofSeconds(10),
                () -> proposer.committed(barrier), committed -> committed);
    }

    @Test
    void aCheckThatNeverCommitsIsNeverAnswered() throws Exception {
        proposer.start();
        proposer.open(0);
        proposer.checked(key("a"), 1);
        long barrier = proposer.barrier();
        List<Boolean> outcome = new CopyOnWriteArrayList<>();
        proposer.whenCommitted(barrier, outcome::add);
        proposals.poll(5, TimeUnit.SECONDS).completeExceptionally(new IllegalStateException("not leader"));
        Wait.until("the proposal's failure reported (failures)", Duration.ofSeconds(10), () -> List.copyOf(failures), f -> !f.isEmpty());
        assertThat(proposer.committed(barrier)).isFalse();
        proposer.close(); // what the node does on the failure: it stops serving
        Wait.until("the Check answered on close (outcomes)", Duration.ofSeconds(10), () -> List.copyOf(outcome), o -> !o.isEmpty());
        assertThat(outcome).containsExactly(false);
    }

    @Test
    void theCheckCommandSurvivesTheLogCodec() {
        List<Command> back = CommandCodec.decode(
                CommandCodec.encode(List.of(new Command.Check(key("orders/42"), 1000))));
        assertThat(back).hasSize(1);
        Command.Check c = (Command.Check) back.get(0);
        assertThat(c.token()).isEqualTo(1000);
        assertThat(new String(c.key(), UTF_8)).isEqualTo("orders/42");
        ReplicatedTable table = new ReplicatedTable();
        table.apply(new Command.Grant(key("k"), 5, 10));
        assertThat(table.apply(new Command.Check(key("k"), 5))).isEqualTo(ReplicatedTable.Outcome.CHECKED);
        assertThat(table.size()).as("a check changes nothing").isEqualTo(1);
    }

    /**
     * PROTOCOL.md 13.9: a shared grant round-trips with its limit; a batch with one is written in
     * format 3 (which a build before shared holds stops on), a batch without one stays format 1.
     */
    @Test
    void aSharedGrantRoundTripsWithItsLimitInFormatThree() {
        List<Command> batch = List.of(new Command.Grant(key("a"), 7, 30),
                new Command.Grant(key("config/pricing"), 0x0102030405060708L, 255, HoldMode.ofLimit(65535)),
                new Command.Grant(key("r"), 9, 1, HoldMode.ofLimit(0)), new Command.Expire(key("r"), 9, 4));
        byte[] bytes = CommandCodec.encode(batch);
        assertThat(bytes[0]).isEqualTo(CommandCodec.SHARED_VERSION);
        List<Command> back = CommandCodec.decode(bytes);
        assertThat(back).hasSize(4);
        Command.Grant s = (Command.Grant) back.get(1);
        assertThat(s.token()).isEqualTo(0x0102030405060708L);
        assertThat(s.leaseSeconds()).isEqualTo(255);
        assertThat(s.mode()).isEqualTo(HoldMode.permits(65535));
        assertThat(new String(s.key(), UTF_8)).isEqualTo("config/pricing");
        assertThat(((Command.Grant) back.get(2)).mode()).isEqualTo(HoldMode.READ);
        assertThat(((Command.Grant) back.get(0)).mode()).isEqualTo(HoldMode.EXCLUSIVE);
        assertThat(((Command.Grant) back.get(0)).leaseSeconds()).isEqualTo(30);
        assertThat(((Command.Expire) back.get(3)).delaySeconds()).isEqualTo(4);
        assertThat(CommandCodec.encode(List.of(new Command.Grant(key("a"), 7, 30)))[0])
                .as("no shared grant: still readable by a build before shared holds").isEqualTo(CommandCodec.VERSION);
        byte[] sharedInFormatOne = bytes.clone();
        sharedInFormatOne[0] = CommandCodec.VERSION;
        assertThatThrownBy(() -> CommandCodec.decode(sharedInFormatOne)).hasMessageContaining("unknown command 83");
    }

    @Test
    void answersWaitForTheirCommitAndComeInOrder() throws Exception {
        proposer.start();
        proposer.open(41);
        assertThat(proposer.next()).as("tokens continue above the replicated counter").isEqualTo(42);
        proposer.granted(key("a"), 42, 10, HoldMode.EXCLUSIVE, null);
        long first = proposer.barrier();
        List<String> answered = new CopyOnWriteArrayList<>();
        proposer.whenCommitted(first, ok -> answered.add("first " + ok));
        CompletableFuture<Object> batch1 = proposals.poll(5, TimeUnit.SECONDS);

        // While batch 1 is in flight (max 1), two more decisions queue up: one batch later.
        proposer.released(key("a"), 42);
        proposer.extended(key("b"), 7, 30);
        long second = proposer.barrier();
        proposer.whenCommitted(second, ok -> answered.add("second " + ok));
        assertThat(proposer.committed(first)).isFalse();
        assertThat(answered).isEmpty();

        batch1.complete("ok");
        Wait.until("the first batch's answer (answered)", Duration.ofSeconds(10), () -> List.copyOf(answered), a -> a.size() == 1);
        assertThat(answered).containsExactly("first true");
        CompletableFuture<Object> batch2 = proposals.poll(5, TimeUnit.SECONDS);
        assertThat(batches).hasSize(2);
        assertThat(batches.get(1)).hasSize(2);
        batch2.complete("ok");
        Wait.until("the second batch's answer (answered)", Duration.ofSeconds(10), () -> List.copyOf(answered), a -> a.size() == 2);
        assertThat(answered).containsExactly("first true", "second true");
        assertThat(proposer.committed(second)).isTrue();
    }

    @Test
    void whenServingStopsWaitingAnswersAreDroppedAndNothingIsIssued() throws Exception {
        proposer.start();
        proposer.open(0);
        proposer.granted(key("a"), proposer.next(), 10, HoldMode.EXCLUSIVE, null);
        List<Boolean> answered = new CopyOnWriteArrayList<>();
        proposer.whenCommitted(proposer.barrier(), answered::add);
        proposals.poll(5, TimeUnit.SECONDS);
        proposer.close();
        assertThat(answered).containsExactly(false);
        assertThat(proposer.next()).isEqualTo(TokenSource.NONE);
        proposer.granted(key("b"), 5, 10, HoldMode.EXCLUSIVE, null); // ignored: not serving
        assertThat(proposer.backlog()).isZero();
        proposer.whenCommitted(proposer.barrier(), answered::add);
        assertThat(answered).containsExactly(false, false);
    }

    @Test
    void aFailedProposalIsReported() throws Exception {
        proposer.start();
        proposer.open(0);
        proposer.expired(key("a"), 3, 0);
        proposals.poll(5, TimeUnit.SECONDS).completeExceptionally(new IllegalStateException("not leader"));
        Wait.until("the proposal's failure reported (failures)", Duration.ofSeconds(10), () -> List.copyOf(failures), f -> f.size() == 1);
    }

    @Test
    void aBatchCommittedAfterAFailedOneAnswersNothing() throws Exception {
        LinkedBlockingQueue<CompletableFuture<Object>> inFlight = new LinkedBlockingQueue<>();
        Proposer two = new Proposer(bytes -> {
            CompletableFuture<Object> f = new CompletableFuture<>();
            inFlight.add(f);
            return f;
        }, 256, 2, 1000, NanoClock.SYSTEM, nanos -> { }, failures::add);
        try {
            two.start();
            two.open(0);
            List<String> answered = new CopyOnWriteArrayList<>();
            two.granted(key("a"), 1, 10, HoldMode.EXCLUSIVE, null);
            two.whenCommitted(two.barrier(), ok -> answered.add("a " + ok));
            CompletableFuture<Object> batch1 = inFlight.poll(5, TimeUnit.SECONDS);
            two.granted(key("b"), 2, 10, HoldMode.EXCLUSIVE, null);
            two.whenCommitted(two.barrier(), ok -> answered.add("b " + ok));
            CompletableFuture<Object> batch2 = inFlight.poll(5, TimeUnit.SECONDS);
            assertThat(batch2).as("two batches in flight").isNotNull();

            // The first batch was never appended (say, not leader any more) but the second was:
            // the second's answer must not go out, since the grant before it was never logged.
            batch1.completeExceptionally(new IllegalStateException("not leader"));
            batch2.complete("ok");
            Wait.until("the failed batch's failure reported (failures)", Duration.ofSeconds(10), () -> List.copyOf(failures),
                    f -> f.size() == 1);
            assertThat(answered).isEmpty();
            two.close(); // what stepping down does
            assertThat(answered).containsExactlyInAnyOrder("a false", "b false");
        } finally {
            two.stop();
        }
    }

    /**
     * A full replication queue ({@code max-pending}) refuses the grant before anything is
     * proposed, and the registry counts that {@code B} as {@code replication}, not as
     * {@code storage} (the data directory is fine; the Raft log commits too slowly). With one
     * batch in flight that the sink never commits, exactly {@code max-pending + 1} further grants
     * fit; the next is Busy; once the batch commits the queue drains and grants resume. Not serving
     * gives the same reason.
     */
    @Test
    void aFullReplicationQueueIsBusyForTheReasonReplication() throws Exception {
        LinkedBlockingQueue<CompletableFuture<Object>> inFlight = new LinkedBlockingQueue<>();
        Proposer small = new Proposer(bytes -> {
            CompletableFuture<Object> f = new CompletableFuture<>();
            inFlight.add(f);
            return f;
        }, 256, 1, 3, NanoClock.SYSTEM, nanos -> { }, failures::add);
        List<BusyReason> counted = new CopyOnWriteArrayList<>();
        RegistryObserver observer = new RegistryObserver() {
            @Override
            public void busy(BusyReason reason) {
                counted.add(reason);
            }
        };
        LockRegistry registry = new LockRegistry(new RegistryLimits(100, 1000, 100, 1000), NanoClock.SYSTEM, small,
                LeaseHorizon.UNBOUNDED, w -> { }, observer, small);
        SessionHandle session = new SessionHandle();
        try {
            small.start();
            small.open(0);
            assertThat(registry.acquire(key("k0"), HoldMode.EXCLUSIVE, 0, 10, 100, NanoClock.SYSTEM.nanoTime(), session))
                    .isInstanceOf(AcquireResult.Granted.class);
            CompletableFuture<Object> batch1 = inFlight.poll(5, TimeUnit.SECONDS);
            assertThat(batch1).as("the first grant is proposed and stays in flight").isNotNull();
            for (int i = 1; i <= 4; i++) {
                assertThat(registry.acquire(key("k" + i), HoldMode.EXCLUSIVE, 0, 10, 100 + i, NanoClock.SYSTEM.nanoTime(), session))
                        .as("grant %d: %d decisions waiting, max-pending 3", i, i - 1)
                        .isInstanceOf(AcquireResult.Granted.class);
            }
            assertThat(registry.acquire(key("k5"), HoldMode.EXCLUSIVE, 0, 10, 105, NanoClock.SYSTEM.nanoTime(), session))
                    .isEqualTo(new AcquireResult.Busy(BusyReason.REPLICATION));
            assertThat(counted).containsExactly(BusyReason.REPLICATION);
            assertThat(small.backlog()).as("nothing of the refused Acquire was appended").isEqualTo(4);
            // PROTOCOL.md 16.6: an O whose no-op cannot be logged either starts no watch (B watch).
            dev.leasehold.registry.Watch refused = new dev.leasehold.registry.Watch() {
                @Override
                protected void decided(dev.leasehold.registry.KeyEvent event) {
                    throw new AssertionError("a refused watch is told nothing: " + event);
                }

                @Override
                protected void afterDecided() {
                }
            };
            assertThat(registry.watch(key("k0"), refused)).as("the O's no-op: the queue is full").isFalse();
            assertThat(small.backlog()).isEqualTo(4);

            batch1.complete("ok");
            assertThat(inFlight.poll(5, TimeUnit.SECONDS)).as("the waiting decisions go out as the next batch")
                    .isNotNull();
            assertThat(registry.acquire(key("k5"), HoldMode.EXCLUSIVE, 0, 10, 106, NanoClock.SYSTEM.nanoTime(), session))
                    .isInstanceOf(AcquireResult.Granted.class);

            small.close(); // stepping down
            assertThat(registry.acquire(key("k6"), HoldMode.EXCLUSIVE, 0, 10, 107, NanoClock.SYSTEM.nanoTime(), session))
                    .isEqualTo(new AcquireResult.Busy(BusyReason.REPLICATION));
            assertThat(counted).containsExactly(BusyReason.REPLICATION, BusyReason.REPLICATION);
        } finally {
            small.stop();
        }
    }
}
