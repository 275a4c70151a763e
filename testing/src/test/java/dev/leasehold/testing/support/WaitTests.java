package dev.leasehold.testing.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** A wait returns as soon as its condition holds, and a wait that gives up says what, what it saw and how long. */
class WaitTests {

    @Test
    void returnsTheFirstStateThatSatisfiesTheCondition() {
        AtomicInteger reads = new AtomicInteger();
        int seen = Wait.until("three reads", Duration.ofSeconds(10), reads::incrementAndGet, n -> n >= 3);
        assertThat(seen).isEqualTo(3);
        assertThat(reads).hasValue(3);
    }

    @Test
    void aConditionThatHoldsAtOnceIsReadOnceWithoutSleeping() {
        long start = System.nanoTime();
        assertThat(Wait.until("a constant", Duration.ofSeconds(10), () -> "x", "x"::equals)).isEqualTo("x");
        assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(1).toNanos());
    }

    @Test
    void givingUpNamesWhatWasAwaitedTheLastStateAndTheTimeWaited() {
        assertThatThrownBy(() -> Wait.until("no session left on the server (port 4711)", Duration.ofMillis(150),
                () -> 102, n -> n == 0))
                .isInstanceOf(AssertionError.class)
                .hasMessageMatching("gave up after \\d+\\.\\d+ s waiting for no session left on the server \\(port 4711\\); last seen: 102");
    }

    @Test
    void aReadThatThrowsIsNotYetAndItsLastExceptionIsInTheFailure() {
        AtomicInteger reads = new AtomicInteger();
        // 1 s, read every 10 ms: with 100 ms, a cold JVM at load 7 spent the whole wait on the first
        // read (its lambda and exception classes loading) and never read again (campaign run 43).
        assertThatThrownBy(() -> Wait.until("n1's health", Duration.ofSeconds(1), Duration.ofMillis(10), () -> {
            throw new IOException("connection refused #" + reads.incrementAndGet());
        }, s -> true))
                .hasMessageStartingWith("gave up after ")
                .hasMessageContaining("waiting for n1's health; last seen: an exception, java.io.IOException: connection refused #")
                .hasCauseInstanceOf(IOException.class);
        assertThat(reads.get()).isGreaterThan(1);
    }

    @Test
    void aReadThatThrowsAndThenSucceedsIsFine() {
        AtomicInteger reads = new AtomicInteger();
        int seen = Wait.until("the second read", Duration.ofSeconds(10), () -> {
            if (reads.incrementAndGet() == 1) {
                throw new IOException("not yet");
            }
            return reads.get();
        }, n -> true);
        assertThat(seen).isEqualTo(2);
    }

    @Test
    void giveUpEndsTheWaitAtOnceWithItsReason() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> Wait.until("n2 to listen", Duration.ofSeconds(30), () -> {
            throw Wait.giveUp("the process exited with 1");
        }, s -> true))
                .isInstanceOf(AssertionError.class)
                .hasMessageMatching("gave up after 0\\.\\d s waiting for n2 to listen: the process exited with 1");
        assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(5).toNanos());
    }

    @Test
    void untilAssertedRetriesUntilTheAssertionsPass() {
        AtomicInteger reads = new AtomicInteger();
        Wait.untilAsserted("four reads", Duration.ofSeconds(10), () -> assertThat(reads.incrementAndGet()).isEqualTo(4));
        assertThat(reads).hasValue(4);
    }

    @Test
    void untilAssertedGivesTheLastAssertionMessage() {
        assertThatThrownBy(() -> Wait.untilAsserted("the scrape to show two sessions", Duration.ofMillis(100),
                () -> assertThat(1).as("leasehold_sessions").isEqualTo(2)))
                .isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("gave up after ")
                .hasMessageContaining("waiting for the scrape to show two sessions; last seen: [leasehold_sessions]")
                .hasMessageContaining("expected: 2");
    }

    @Test
    void aPollIntervalIsHonoured() {
        AtomicInteger reads = new AtomicInteger();
        assertThatThrownBy(() -> Wait.until("never", Duration.ofMillis(450), Duration.ofMillis(200),
                reads::incrementAndGet, n -> false)).isInstanceOf(AssertionError.class);
        // at 0, 200, 400 ms and the deadline; a stalled machine reads fewer (a first read can outlast the wait)
        assertThat(reads.get()).isBetween(1, 4);
    }

    @Test
    void aSeenStatePrintsWhatWasSeen() {
        assertThatThrownBy(() -> Wait.until("a leader among n1, n2, n3", Duration.ofMillis(50),
                () -> Wait.Seen.nothing("n1 refused, n2 answered X 8, n3 not running"), Wait.Seen::found))
                .hasMessageEndingWith("waiting for a leader among n1, n2, n3; last seen: n1 refused, n2 answered X 8, n3 not running");
        assertThat(Wait.until("n2", Duration.ofSeconds(1), () -> new Wait.Seen<>(2, "n2 granted"), Wait.Seen::found).value())
                .isEqualTo(2);
    }

    @Test
    void aConditionThatThrowsIsNotYetAndShowsTheStateItThrewOn() {
        assertThatThrownBy(() -> Wait.until("a JSON field", Duration.ofMillis(50), () -> "{}", s -> {
            throw new IllegalStateException("no field 'leader'");
        })).hasMessageEndingWith("last seen: {} (the condition threw java.lang.IllegalStateException: no field 'leader')");
    }

    @Test
    void holdsForPassesWhenTheConditionHoldsThroughout() {
        long start = System.nanoTime();
        Wait.holdsFor("n2 not granted", Duration.ofMillis(200), () -> 0, n -> n == 0);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(200).toNanos());
    }

    @Test
    void holdsForFailsAtTheFirstStateThatBreaksIt() {
        AtomicInteger reads = new AtomicInteger();
        assertThatThrownBy(() -> Wait.holdsFor("n2 not granted while n1 leads", Duration.ofSeconds(30),
                reads::incrementAndGet, n -> n < 3))
                .isInstanceOf(AssertionError.class)
                .hasMessageMatching("n2 not granted while n1 leads stopped holding after 0\\.\\d s; seen: 3");
    }

    @Test
    void secondsHaveOneDecimal() {
        assertThat(Wait.seconds(10_240_000_000L)).isEqualTo("10.2 s");
        assertThat(Wait.seconds(0)).isEqualTo("0.0 s");
    }
}
