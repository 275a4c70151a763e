package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A periodic task that throws on the roles thread keeps its period (a scheduled executor would end
 * it for good, keeping the exception in a future nobody reads). One-off tasks that throw are logged
 * by the same guard; {@code ServingSwitchTests} covers the promotion that retries after a failure.
 */
class RolesThreadTests {

    private final RolesThread roles = new RolesThread("roles-test");

    @AfterEach
    void stop() {
        roles.shutdownNow();
    }

    @Test
    void aPeriodicTaskThatThrowsKeepsItsPeriod() throws InterruptedException {
        roles.start();
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch third = new CountDownLatch(1);
        roles.every(() -> {
            if (runs.incrementAndGet() == 3) {
                third.countDown();
            }
            throw new IllegalStateException("test: every run fails");
        }, 1);
        assertThat(third.await(10, TimeUnit.SECONDS)).as("a third run after two that threw (runs: %s)", runs).isTrue();
    }
}
