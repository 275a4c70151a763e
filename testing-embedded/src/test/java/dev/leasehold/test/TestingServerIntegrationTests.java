package dev.leasehold.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;

class TestingServerIntegrationTests {

    @Test
    void startsInUnderTwoSecondsAndGrantsOverItsPort() {
        long cold = System.nanoTime();
        TestingServer.start().close(); // class loading of the first start in this JVM, reported apart
        System.out.println("TestingServer start+close took " + Duration.ofNanos(System.nanoTime() - cold).toMillis()
                + " ms (the first in this test class)");
        long start = System.nanoTime();
        try (TestingServer server = TestingServer.start()) {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            System.out.println("TestingServer.start() took " + took.toMillis() + " ms (warm JVM)");
            assertThat(took).isLessThan(Duration.ofSeconds(2));
            assertThat(server.address()).isEqualTo("127.0.0.1:" + server.port());
            LeaseholdClient client = server.client();
            AcquireOutcome first = client.acquire("orders/nightly", 0, 30);
            assertThat(first).isInstanceOf(AcquireOutcome.Acquired.class);
            assertThat(server.client().acquire("orders/nightly", 0, 30)).isInstanceOf(AcquireOutcome.TimedOut.class);
        }
    }

    @Test
    void firstStartInAFreshJvmIsMeasured() {
        // Not asserted tightly: the first start in a JVM loads Netty and the server's classes.
        long start = System.nanoTime();
        try (TestingServer server = TestingServer.start()) {
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            System.out.println("TestingServer.start() took " + took.toMillis() + " ms (this JVM's first or later start)");
            assertThat(took).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    void closeLeavesNoThreadAndNoFile() throws InterruptedException {
        Leftovers leftovers = Leftovers.snapshot();
        Path dir;
        try (TestingServer server = TestingServer.start()) {
            dir = server.dataDirectory();
            assertThat(server.client().acquire("k", 0, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
            assertThat(leftovers.newThreads()).isNotEmpty();
        }
        Leftovers.assertGone(dir);
        leftovers.awaitNoNewThreads(Duration.ofSeconds(10));
    }

    @Test
    void restartKeepsPortAndTokensGrowAcrossIt() {
        try (TestingServer server = TestingServer.start()) {
            int port = server.port();
            LeaseholdClient before = server.client();
            long token = ((AcquireOutcome.Acquired) before.acquire("k", 0, 1)).ticket().token();
            // As after a real restart, the recovery grace holds keys until the longest lease the
            // previous run granted (1 s here, plus the clock slack) could have ended.
            server.restart();
            assertThat(server.port()).isEqualTo(port);
            AcquireOutcome after = server.client().acquire("k", 15, 30);
            assertThat(after).isInstanceOf(AcquireOutcome.Acquired.class);
            assertThat(((AcquireOutcome.Acquired) after).ticket().token()).isGreaterThan(token);
        }
    }
}
