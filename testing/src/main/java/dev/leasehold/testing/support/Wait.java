package dev.leasehold.testing.support;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The one way a test waits for something to happen: poll a state until a condition holds, within a
 * deadline, and when it gives up say what was waited for, what was last seen and how long it
 * waited, so that a failure reads apart from a slow machine:
 *
 * <pre>
 * gave up after 10.2 s waiting for no session left on the server (port 40123); last seen: 2
 * </pre>
 *
 * <p>Deadlines are generous (CI has two noisy cores and sometimes runs two builds at once): a wait
 * that succeeds returns as soon as its condition holds, so a long deadline costs nothing unless
 * something is wrong. The state is read at once, then after 10 ms, doubling up to 100 ms between
 * reads (or every {@code pollEvery} where given: a health endpoint of another process).
 *
 * <p>A state read (or a condition) that throws counts as "not yet"; if the wait gives up, its
 * message has the last exception and the exception is the cause. A read that knows waiting longer is useless
 * (the process it waits for has exited) throws {@link #giveUp(String)}, which ends the wait at once.
 *
 * <p>Waits only for events. Time that must really pass (a lease running out) is a sleep with a
 * comment saying so, not a wait.
 */
public final class Wait {

    private static final long FIRST_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private Wait() {
    }

    /** A state to read; may throw (counted as "not yet"). */
    @FunctionalInterface
    public interface State<T> {
        /** The state now. */
        T get() throws Exception;
    }

    /** A check made of assertions; an assertion that fails means "not yet". */
    @FunctionalInterface
    public interface Check {
        /** Returns if the condition holds, throws (an AssertionError, usually) if not yet. */
        void run() throws Exception;
    }

    /**
     * Thrown by a state read to end the wait at once (the process it waits for has exited, say);
     * the wait then fails with this message.
     */
    public static final class GiveUp extends RuntimeException {
        private GiveUp(String message) {
            super(message);
        }
    }

    /** What a state read throws to end its wait at once, with {@code why} in the failure. */
    public static GiveUp giveUp(String why) {
        return new GiveUp(why);
    }

    /**
     * Reads {@code state} until {@code done} holds for it, for at most {@code atMost}; returns the
     * state that satisfied it.
     *
     * @param what what is waited for, with the node, server or port it concerns ("n2 to be leader")
     * @throws AssertionError when it gives up: "gave up after S s waiting for WHAT; last seen: STATE"
     */
    public static <T> T until(String what, Duration atMost, State<? extends T> state, Predicate<? super T> done) {
        return until(what, atMost, null, state, done);
    }

    /** As {@link #until(String, Duration, State, Predicate)}, reading the state every {@code pollEvery}. */
    public static <T> T until(String what, Duration atMost, Duration pollEvery, State<? extends T> state,
                              Predicate<? super T> done) {
        Objects.requireNonNull(what, "what");
        Objects.requireNonNull(done, "done");
        long start = System.nanoTime();
        long limit = atMost.toNanos();
        long pause = pollEvery == null ? FIRST_POLL_NANOS : pollEvery.toNanos();
        String lastSeen = "nothing read yet";
        Exception lastFailure = null;
        while (true) {
            T now = null;
            boolean read = false;
            try {
                now = state.get();
                read = true;
                if (done.test(now)) {
                    return now;
                }
                lastSeen = String.valueOf(now);
                lastFailure = null;
            } catch (GiveUp g) {
                throw new AssertionError("gave up after " + seconds(System.nanoTime() - start) + " waiting for "
                        + what + ": " + g.getMessage(), g);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted after " + seconds(System.nanoTime() - start)
                        + " waiting for " + what + "; last seen: " + lastSeen, e);
            } catch (Exception e) {
                lastFailure = e;
                lastSeen = read ? now + " (the condition threw " + e + ")" : "an exception, " + e;
            }
            long waited = System.nanoTime() - start;
            if (waited >= limit) {
                AssertionError failure = new AssertionError("gave up after " + seconds(waited) + " waiting for "
                        + what + "; last seen: " + lastSeen);
                if (lastFailure != null) {
                    failure.initCause(lastFailure);
                }
                throw failure;
            }
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(pause, limit - waited));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted after " + seconds(System.nanoTime() - start)
                        + " waiting for " + what + "; last seen: " + lastSeen, e);
            }
            if (pollEvery == null) {
                pause = Math.min(MAX_POLL_NANOS, pause * 2);
            }
        }
    }

    /**
     * Runs {@code check} until it passes, for at most {@code atMost}. The check's assertions say
     * what they expected and found; on giving up their last message is in the failure:
     * "gave up after S s waiting for WHAT; last seen: ASSERTION MESSAGE".
     */
    public static void untilAsserted(String what, Duration atMost, Check check) {
        until(what, atMost, () -> {
            try {
                check.run();
                return Passed.YES;
            } catch (AssertionError e) {
                return new Failed(e);
            }
        }, r -> r == Passed.YES);
    }

    /**
     * Checks that {@code ok} holds for {@code state} throughout {@code during} (real time that must
     * pass: "node2 is not granted while node1 leads"), reading it as {@link #until} does; fails at
     * the first state that breaks it.
     *
     * @throws AssertionError "WHAT stopped holding after S s; seen: STATE"
     */
    public static <T> void holdsFor(String what, Duration during, State<? extends T> state, Predicate<? super T> ok) {
        long start = System.nanoTime();
        long pause = FIRST_POLL_NANOS;
        while (true) {
            T now;
            try {
                now = state.get();
            } catch (Exception e) {
                throw new AssertionError("could not read the state of " + what + " after "
                        + seconds(System.nanoTime() - start) + ": " + e, e);
            }
            if (!ok.test(now)) {
                throw new AssertionError(what + " stopped holding after " + seconds(System.nanoTime() - start)
                        + "; seen: " + now);
            }
            long waited = System.nanoTime() - start;
            if (waited >= during.toNanos()) {
                return;
            }
            try {
                TimeUnit.NANOSECONDS.sleep(Math.min(pause, during.toNanos() - waited));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted checking " + what, e);
            }
            pause = Math.min(MAX_POLL_NANOS, pause * 2);
        }
    }

    /** Waits until {@code process} has exited, for at most {@code atMost}; returns its exit code. */
    public static int exitOf(String what, Process process, Duration atMost) {
        long start = System.nanoTime();
        try {
            if (process.waitFor(atMost.toNanos(), TimeUnit.NANOSECONDS)) {
                return process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what + " to exit", e);
        }
        throw new AssertionError("gave up after " + seconds(System.nanoTime() - start) + " waiting for " + what
                + " to exit; last seen: still running (pid " + process.pid() + ")");
    }

    /**
     * A state that prints as a description of its own: a probe's result ({@code value}, null if
     * nothing found yet) and what each node answered ({@code seen}), which a failure then shows.
     */
    public record Seen<T>(T value, String seen) {
        /** Nothing found yet; {@code seen} says what was. */
        public static <T> Seen<T> nothing(String seen) {
            return new Seen<>(null, seen);
        }

        /** True once a value was found. */
        public boolean found() {
            return value != null;
        }

        @Override
        public String toString() {
            return seen;
        }
    }

    /** Seconds with one decimal, as the failure messages show them ("10.2 s"). */
    static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    private enum Passed { YES }

    /** A failed check as a state: prints its assertion message (one line per line of it). */
    private record Failed(AssertionError error) {
        @Override
        public String toString() {
            return String.valueOf(error.getMessage()).strip();
        }
    }
}
