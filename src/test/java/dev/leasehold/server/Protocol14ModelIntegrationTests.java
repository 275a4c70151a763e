package dev.leasehold.server;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Seeds;

/**
 * A randomized model test of revision 1.4 (PROTOCOL.md sections 14 to 17): a real server on port 0 (lock-delay off),
 * four keys, four actor sessions and two observer sessions, and a seeded schedule of exclusive
 * {@code M} (wait 0 or a few ms, with or without a value), shared {@code M} (a read/write key and
 * a semaphore of 2, with limit mismatches where the model proves an {@code L}), {@code W} of
 * queued acquires, {@code R} of held tokens, {@code V} on held and stale tokens, and {@code O}/{@code U}.
 * The reference model ({@link Protocol14KeyModel}) follows the answers the server gave: races such
 * as a {@code W} against a grant are decided by the server, the model accepts either legal outcome
 * and follows it. Checked: one answer per acquire (6.4 and 15.4), a {@code W} that found its
 * acquire queued ends it with {@code T} and a raced grant is released, {@code V} answers, 6.1,
 * and per watch the rules of 16.2–16.5 ({@link Protocol14WatchLog}); once quiet, every open
 * watch's last event is the key's state. The seed is printed; rerun with
 * {@code -Dleasehold.model.seed=N} (or the suite-wide {@code -Dleasehold.seed=N}). A seed repeats
 * the schedule's choices; the races in it are the server's to decide, so a rerun may take other
 * branches of them (the model follows whichever was taken).
 */
class Protocol14ModelIntegrationTests {

    /** Steps of the schedule: 400 (about 2 s here), or {@code -Dleasehold.model.steps=N} for a longer hunt. */
    private static final int STEPS = Integer.getInteger("leasehold.model.steps", 400);
    private static final int LEASE_SECONDS = 30; // longer than the run: grants end only by Release

    /** One acquire sent and not yet answered. */
    private static final class Pending {
        final long owner;
        final Protocol14KeyModel key;
        final boolean shared;
        final long waitMillis;
        final byte[] value;
        final long sentNanos = System.nanoTime();
        boolean expectLimitMismatch;
        boolean withdrawn;
        /** Still unanswered when the Pong after its W came: the W found nothing queued, so it was granted. */
        boolean grantedBeforeWithdraw;
        /** When that Pong came: the grant was decided before it. */
        long withdrawPongNanos;

        Pending(long owner, Protocol14KeyModel key, boolean shared, long waitMillis, byte[] value) {
            this.owner = owner;
            this.key = key;
            this.shared = shared;
            this.waitMillis = waitMillis;
            this.value = value;
        }
    }

    private record Held(long token, Protocol14KeyModel key, boolean shared) {
    }

    private record Actor(int id, RawClient client, Map<Long, Pending> pending) {
    }

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Protocol14Trace trace = new Protocol14Trace();
    private final List<Held> held = new ArrayList<>();
    private final List<Held> released = new ArrayList<>();
    private final Deque<Held> racedGrants = new ArrayDeque<>();
    private final Set<Long> tokensSeen = new HashSet<>();
    private final Map<Long, Protocol14WatchLog> watches = new LinkedHashMap<>();
    private Random random;
    private long nextOwner = 1;
    private long nextWatch = 1;
    private long nextNonce = 1;

    private final Protocol14KeyModel[] keys = {
        new Protocol14KeyModel("model/x0", true, false, 0),
        new Protocol14KeyModel("model/x1", true, false, 0),
        new Protocol14KeyModel("model/rw", true, true, 0),
        new Protocol14KeyModel("model/sem", false, true, 2),
    };

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    @Test
    void randomScheduleOfMWOVAgreesWithTheReferenceModel() throws Exception {
        String fixed = System.getProperty("leasehold.model.seed");
        long seed = fixed != null ? Long.parseLong(fixed) : Seeds.seed("Protocol14ModelIntegrationTests");
        if (fixed != null) {
            System.out.println("Protocol14ModelIntegrationTests seed " + seed + " (from -Dleasehold.model.seed)");
        }
        random = new Random(seed);
        long started = System.nanoTime();
        TestServer server = TestServer.start(Map.of("leasehold.lock-delay", "0s"));
        closeables.add(server);
        List<Actor> actors = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            actors.add(new Actor(i, open(server.port()), new LinkedHashMap<>()));
        }
        Protocol14Observer steady = new Protocol14Observer(0, open(server.port()), watches, trace);
        Protocol14Observer churn = new Protocol14Observer(1, open(server.port()), watches, trace);
        for (Protocol14KeyModel key : keys) {
            steady.observe(nextWatch++, key, true); // the reference watch of each key, open for the whole run
        }
        steady.observe(nextWatch++, keys[2], false); // a second watch on one key, same session
        churn.observe(nextWatch++, keys[0], false);
        churn.observe(nextWatch++, keys[3], false);
        long scheduleStarted = System.nanoTime();

        for (int step = 0; step < STEPS; step++) {
            releaseRacedGrants(actors.get(0));
            Actor actor = actors.get(random.nextInt(actors.size()));
            int roll = random.nextInt(100);
            if (roll < 30) {
                exclusiveAcquire(actor);
            } else if (roll < 45) {
                sharedAcquire(actor);
            } else if (roll < 63) {
                releaseOne(actor);
            } else if (roll < 78) {
                setValue(actor);
            } else if (roll < 88) {
                withdraw(actor);
            } else if (roll < 96) {
                observeOrUnobserve(churn);
            } else {
                (random.nextBoolean() ? steady : churn).ping(); // reads the events that came so far
            }
        }

        quiet(actors);
        steady.settle();
        churn.settle();
        checkWatches();
        System.out.printf("Protocol14ModelIntegrationTests seed %d: server up in %d ms, %d steps and checks in %d ms, %s,"
                + " %d watches%n", seed, (scheduleStarted - started) / 1_000_000, STEPS,
                (System.nanoTime() - scheduleStarted) / 1_000_000, trace.counts(), watches.size());
    }

    private RawClient open(int port) throws IOException {
        RawClient c = new RawClient(port);
        closeables.add(c);
        return c;
    }

    // ---- actions ----

    private void exclusiveAcquire(Actor actor) throws IOException {
        Protocol14KeyModel key = pick(keys[0], keys[1], keys[2]);
        long waitMillis = randomWait();
        byte[] value = random.nextBoolean() ? randomValue() : new byte[0];
        Pending p = new Pending(nextOwner++, key, false, waitMillis, value);
        actor.pending().put(p.owner, p);
        note("actor %d: M exclusive owner %d %s wait %d ms vlen %d", actor.id(), p.owner, key.name, waitMillis, value.length);
        actor.client().send(new Request.MilliAcquire(0, waitMillis, LEASE_SECONDS, p.owner, 0, value, key.bytes));
    }

    private void sharedAcquire(Actor actor) throws IOException {
        Protocol14KeyModel key = pick(keys[2], keys[3]);
        Pending p = new Pending(nextOwner++, key, true, randomWait(), new byte[0]);
        int limit = key.limit;
        if (key == keys[3] && !key.shared.isEmpty() && random.nextInt(4) == 0) {
            // A shared grant the model knows is active fixes the limit: another limit is L at once (13.2).
            limit = key.limit + 1;
            p.expectLimitMismatch = true;
        }
        actor.pending().put(p.owner, p);
        note("actor %d: M shared owner %d %s limit %d wait %d ms", actor.id(), p.owner, key.name, limit, p.waitMillis);
        actor.client().send(Request.MilliAcquire.shared(p.waitMillis, LEASE_SECONDS, p.owner, limit, key.bytes));
        if (p.expectLimitMismatch) {
            // Its answer is read before anything else is sent: a Release sent later on another
            // session could reach the server first, free the key and let this M set the limit.
            while (actor.pending().containsKey(p.owner)) {
                Answer a = actor.client().next(10_000);
                check(onAcquireAnswer(actor, a), "actor " + actor.id() + " got " + a + " waiting for an L");
            }
        }
    }

    private void releaseOne(Actor actor) throws IOException {
        if (held.isEmpty()) {
            return;
        }
        release(actor, held.remove(random.nextInt(held.size())));
    }

    private void release(Actor actor, Held h) throws IOException {
        note("actor %d: R %d %s", actor.id(), h.token(), h.key().name);
        // Released in the model as it is sent: the A of the hand-off it causes may come first,
        // on this very session (section 1 orders answers by owner and by token, not across them).
        h.key().release(h.token());
        Answer a = sync(actor, new Request.Release(h.token(), h.key().bytes));
        check(a.equals(new Answer.Released(h.token())), "R of held " + h.token() + " answered " + a);
        released.add(h);
        count("released");
    }

    private void setValue(Actor actor) throws IOException {
        List<Held> exclusive = held.stream().filter(h -> !h.shared()).toList();
        if (!exclusive.isEmpty() && random.nextInt(10) < 6) {
            Held h = exclusive.get(random.nextInt(exclusive.size()));
            byte[] value = random.nextInt(4) == 0 ? h.key().value : randomValue(); // sometimes the value already set
            note("actor %d: V %d %s vlen %d", actor.id(), h.token(), h.key().name, value.length);
            Answer a = sync(actor, new Request.SetValue(h.token(), value, h.key().bytes));
            check(a.equals(new Answer.ValueSet(h.token())), "V of the active exclusive " + h.token() + " answered " + a);
            h.key().valueSet(h.token(), value);
            count("V set");
            return;
        }
        long token;
        Protocol14KeyModel key;
        int kind = random.nextInt(4);
        List<Held> sharedHeld = held.stream().filter(Held::shared).toList();
        if (kind == 0 && !released.isEmpty()) {
            Held h = released.get(random.nextInt(released.size()));
            token = h.token();
            key = h.key();
        } else if (kind == 1 && !sharedHeld.isEmpty()) {
            Held h = sharedHeld.get(random.nextInt(sharedHeld.size()));
            token = h.token();
            key = h.key();
        } else if (kind == 2 && !exclusive.isEmpty()) {
            Held h = exclusive.get(random.nextInt(exclusive.size()));
            token = h.token();
            key = h.key() == keys[0] ? keys[1] : keys[0]; // the right token, another key
        } else {
            token = random.nextBoolean() ? 0 : 1_000_000_000L + random.nextInt(1000);
            key = pick(keys);
        }
        note("actor %d: V stale %d %s", actor.id(), token, key.name);
        Answer a = sync(actor, new Request.SetValue(token, randomValue(), key.bytes));
        check(a.equals(new Answer.NotHeld(token)), "V of " + token + " (not the active exclusive grant of " + key.name
                + ") answered " + a);
        count("V stale");
    }

    private void withdraw(Actor actor) throws IOException {
        List<Pending> candidates = actor.pending().values().stream()
                .filter(p -> p.waitMillis > 0 && !p.withdrawn && !p.expectLimitMismatch).toList();
        Pending p = candidates.isEmpty() ? null : candidates.get(random.nextInt(candidates.size()));
        if (p == null) {
            return;
        }
        p.withdrawn = true;
        long nonce = nextNonce++;
        note("actor %d: W owner %d %s, then P %d", actor.id(), p.owner, p.key.name, nonce);
        actor.client().send(new Request.Withdraw(p.owner, p.key.bytes));
        Answer a = sync(actor, new Request.Ping(nonce));
        check(a.equals(new Answer.Pong(nonce)), "P after W answered " + a);
        if (actor.pending().containsKey(p.owner)) {
            // No T before the Pong: the W found nothing queued, so the grant was decided first
            // (its A may still wait for the lease-horizon fsync), unless its wait ran out just before.
            p.grantedBeforeWithdraw = true;
            p.withdrawPongNanos = System.nanoTime();
        }
        count("W");
    }

    private void observeOrUnobserve(Protocol14Observer observer) throws IOException {
        List<Protocol14WatchLog> open = watches.values().stream()
                .filter(w -> w.observer == observer.id && !w.permanent && !w.unobserved).toList();
        if (open.size() > 2 && random.nextBoolean()) {
            observer.unobserve(open.get(random.nextInt(open.size())));
        } else {
            observer.observe(nextWatch++, pick(keys), false);
        }
    }

    private void releaseRacedGrants(Actor actor) throws IOException {
        while (!racedGrants.isEmpty()) {
            release(actor, racedGrants.poll());
        }
    }

    // ---- reading ----

    /** Sends {@code request} and reads this session until its own answer, dispatching acquire answers. */
    private Answer sync(Actor actor, Request request) throws IOException {
        actor.client().send(request);
        while (true) {
            Answer a = actor.client().next(10_000);
            if (!onAcquireAnswer(actor, a)) {
                return a;
            }
        }
    }

    /** True if {@code a} answered an acquire of {@code actor} (checked and applied to the model). */
    private boolean onAcquireAnswer(Actor actor, Answer a) {
        long owner;
        if (a instanceof Answer.Acquired g) {
            owner = g.owner();
        } else if (a instanceof Answer.TimedOut t) {
            owner = t.owner();
        } else if (a instanceof Answer.Busy b) {
            owner = b.owner();
        } else if (a instanceof Answer.LimitMismatch l) {
            owner = l.owner();
        } else {
            return false;
        }
        Pending p = actor.pending().remove(owner);
        check(p != null, "actor " + actor.id() + ": " + a + " answers no acquire still waiting for its answer");
        note("actor %d: <- %s", actor.id(), a);
        long elapsedMillis = (System.nanoTime() - p.sentNanos) / 1_000_000;
        check(!(a instanceof Answer.Busy), "B under default limits: " + a);
        check(p.expectLimitMismatch == a instanceof Answer.LimitMismatch, "owner " + owner + " expected "
                + (p.expectLimitMismatch ? "L " + p.key.limit : "no L") + ", got " + a);
        if (a instanceof Answer.LimitMismatch l) {
            check(l.limit() == p.key.limit, "L names limit " + l.limit() + ", the key's is " + p.key.limit);
            count("L");
        } else if (a instanceof Answer.TimedOut) {
            boolean early = elapsedMillis < p.waitMillis;
            check(!early || (p.withdrawn && !p.grantedBeforeWithdraw), "T for owner " + owner + " after " + elapsedMillis
                    + " ms of a " + p.waitMillis + " ms wait, " + (p.withdrawn ? "after a W that found nothing queued" : "never withdrawn"));
            count(p.withdrawn ? "T withdrawn" : "T");
        } else if (a instanceof Answer.Acquired g) {
            check(tokensSeen.add(g.token()), "token " + g.token() + " issued twice");
            String problem = p.key.grant(g.token(), p.shared, p.value);
            check(problem == null, p.key.name + ": " + problem);
            Held h = new Held(g.token(), p.key, p.shared);
            if (p.grantedBeforeWithdraw) {
                // Decided before the W arrived, which was before the Pong came; received after it was
                // sent: a grant the W let through would be queued for longer than that.
                long bound = (p.withdrawPongNanos - p.sentNanos) / 1_000_000;
                check(g.queuedMs() <= bound, "owner " + owner + " granted after its W: queued " + g.queuedMs()
                        + " ms, but sent only " + bound + " ms before the Pong after the W");
            }
            if (p.withdrawn) {
                racedGrants.add(h); // a grant decided before the W: the test gives it back (9.14)
                count("A raced with W");
            } else {
                held.add(h);
                count(p.shared ? "A shared" : "A exclusive");
            }
        }
        return true;
    }

    /** Stops acting: gives back raced grants and some holds, and reads every acquire's answer. */
    private void quiet(List<Actor> actors) throws IOException {
        note("quiet");
        for (Held h : new ArrayList<>(held)) {
            if (random.nextBoolean()) {
                held.remove(h);
                release(actors.get(random.nextInt(actors.size())), h); // leave the others held
            }
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            releaseRacedGrants(actors.get(0));
            boolean waiting = false;
            for (Actor actor : actors) {
                if (!actor.pending().isEmpty()) {
                    waiting = true;
                    Answer a = actor.client().poll(20);
                    check(a == null || onAcquireAnswer(actor, a), "actor " + actor.id() + " got " + a);
                }
            }
            if (!waiting && racedGrants.isEmpty()) {
                break;
            }
            check(System.nanoTime() < deadline, "acquires never answered: " + actors.stream()
                    .flatMap(x -> x.pending().keySet().stream()).toList());
        }
        for (Actor actor : actors) {
            long nonce = nextNonce++;
            Answer a = sync(actor, new Request.Ping(nonce));
            check(a.equals(new Answer.Pong(nonce)), "actor " + actor.id() + " got " + a + " instead of its Pong");
            Answer extra = actor.client().poll(100);
            check(extra == null, "actor " + actor.id() + " got an answer after every acquire was answered: " + extra);
        }
    }

    private void checkWatches() {
        Map<Protocol14KeyModel, Protocol14WatchLog> reference = new HashMap<>();
        watches.values().stream().filter(w -> w.permanent).forEach(w -> reference.put(w.key, w));
        for (Protocol14WatchLog w : watches.values()) {
            String problem = w.checkAgainst();
            check(problem == null, problem);
            if (!w.permanent) {
                problem = w.checkWithin(reference.get(w.key));
                check(problem == null, problem);
            }
        }
        for (Protocol14KeyModel key : keys) {
            note("%s: %s", key.name, key.expectedShown());
        }
    }

    // ---- small things ----

    private long randomWait() {
        return random.nextInt(3) == 0 ? 0 : 5 + random.nextInt(250);
    }

    private byte[] randomValue() {
        byte[] v = new byte[random.nextInt(12)];
        for (int i = 0; i < v.length; i++) {
            v[i] = random.nextInt(5) == 0 ? 0x0A : (byte) ('a' + random.nextInt(26)); // values may hold 0x0A
        }
        return v;
    }

    @SafeVarargs
    private <T> T pick(T... choices) {
        return choices[random.nextInt(choices.length)];
    }

    private void count(String what) {
        trace.count(what);
    }

    private void note(String format, Object... args) {
        trace.note(format, args);
    }

    private void check(boolean ok, String message) {
        trace.check(ok, message);
    }
}
