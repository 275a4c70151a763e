package dev.leasehold.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a fixture left behind: threads started since a snapshot, and files. Three process-wide
 * pools of daemon threads are not the fixture's: libraries create them once per JVM on first
 * use and reuse them (the same ones serve every later server), so they are allowed if they are
 * daemons, which never keep a JVM alive. docs/testing-your-app.md names them.
 */
final class Leftovers {

    /** The JDK's CompletableFuture delay thread, Reactor's Schedulers.parallel(), Ratis's TimeoutTimer. */
    private static final java.util.regex.Pattern SHARED_DAEMONS =
            java.util.regex.Pattern.compile("CompletableFutureDelayScheduler|parallel-\\d+|timer\\d+");

    private final Set<Thread> before;

    private Leftovers(Set<Thread> before) {
        this.before = before;
    }

    /** The threads alive now (taken before the fixture starts). */
    static Leftovers snapshot() {
        return new Leftovers(Thread.getAllStackTraces().keySet());
    }

    /** Threads alive now that were not at the snapshot, by name (shared daemon pools left out). */
    Set<String> newThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !before.contains(t))
                .filter(t -> !(t.isDaemon() && SHARED_DAEMONS.matcher(t.getName()).matches()))
                .map(Thread::getName)
                .collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    /**
     * Waits (polling, up to {@code atMost}) until no thread started since the snapshot is alive;
     * executors shut down a moment after they are told to, and Netty's global executor quits
     * after a second of quiet. Fails naming the threads still alive.
     */
    void awaitNoNewThreads(Duration atMost) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        Set<String> left = newThreads();
        while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.sleep(50); // polling the condition, bounded by the deadline
            left = newThreads();
        }
        if (!left.isEmpty()) {
            throw new AssertionError("threads still alive " + atMost.toSeconds() + " s after close: " + left);
        }
    }

    static void assertGone(Path dir) {
        if (Files.exists(dir)) {
            throw new AssertionError("data directory " + dir + " still exists after close");
        }
    }
}
