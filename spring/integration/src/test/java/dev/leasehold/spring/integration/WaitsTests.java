package dev.leasehold.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.testing.support.Wait;

/** The one waiting loop of the lock: through interrupts (status kept) or ended by them. */
class WaitsTests {

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    @Test
    void anUninterruptibleWaitWaitsThroughAnInterruptAndKeepsTheStatus() throws Exception {
        CompletableFuture<String> f = new CompletableFuture<>();
        completeOnceParked(Thread.currentThread(), f);
        Thread.currentThread().interrupt();
        assertThat(Waits.getUninterruptibly(f)).isEqualTo("done");
        assertThat(Thread.currentThread().isInterrupted()).as("the interrupt status is kept").isTrue();
    }

    @Test
    void anInterruptibleWaitEndsOnTheInterrupt() {
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> Waits.get(new CompletableFuture<>(), Waits.FOREVER, true, System::nanoTime))
                .isInstanceOf(InterruptedException.class);
    }

    @Test
    void aBoundedWaitTimesOut() {
        assertThatThrownBy(() -> Waits.get(new CompletableFuture<>(), 0, false, System::nanoTime))
                .isInstanceOf(TimeoutException.class);
    }

    @Test
    void anUninterruptiblePauseDoesNotShortenOnAnInterrupt() throws Exception {
        // The pause is what is tested: 50 ms must really pass although the status is set, where
        // LockSupport.parkNanos would return at once (a hot retry loop in lock() of an interrupted thread).
        Thread.currentThread().interrupt();
        long start = System.nanoTime();
        Waits.pause(TimeUnit.MILLISECONDS.toNanos(50), false, System::nanoTime);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
    }

    private static void completeOnceParked(Thread waiter, CompletableFuture<String> f) {
        Thread helper = new Thread(() -> {
            try {
                Wait.until(waiter.getName() + " to park in the wait (its thread state)", Duration.ofSeconds(10),
                        waiter::getState, s -> s == Thread.State.WAITING);
                f.complete("done");
            } catch (AssertionError e) {
                f.completeExceptionally(e); // else the failure dies with this thread and the test waits forever
            }
        }, "waits-tests-helper");
        helper.setDaemon(true);
        helper.start();
    }
}
