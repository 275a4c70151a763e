package dev.leasehold.client.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Stops a child process and everything it started: SIGTERM to the child and its descendants,
 * then SIGKILL to whatever is still alive at the kill instant. On Linux
 * {@link ProcessHandle#destroy()} sends SIGTERM and {@link ProcessHandle#destroyForcibly()}
 * SIGKILL. Descendants are collected before the first signal and again before the kill, because
 * one whose parent died is re-parented and no longer shows as a descendant; a process that
 * detached itself before the first snapshot (a daemon) cannot be found.
 */
final class ProcessTree {

    private static final long POLL_NANOS = 10_000_000L;

    private ProcessTree() {
    }

    /**
     * SIGTERM now, SIGKILL at {@code killAtNanos} ({@link System#nanoTime()}) to what is still
     * alive, then waits (up to 2 s) for the child to be reaped.
     *
     * @return true if SIGKILL was needed
     */
    static boolean terminate(Process child, long killAtNanos) throws InterruptedException {
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(child.toHandle());
        child.descendants().forEach(tree::add);
        for (ProcessHandle p : tree) {
            p.destroy();
        }
        // Polling on the CLI's own supervisor thread (no event loop in this process): grandchildren
        // have no exit callback, and zombies must be read from /proc (see alive()).
        while (System.nanoTime() - killAtNanos < 0 && anyAlive(tree)) {
            Thread.sleep(Math.max(1, Math.min(POLL_NANOS, killAtNanos - System.nanoTime()) / 1_000_000L));
        }
        boolean killed = false;
        for (ProcessHandle p : List.copyOf(tree)) {
            if (alive(p)) {
                p.descendants().filter(d -> !tree.contains(d)).forEach(tree::add);
            }
        }
        for (ProcessHandle p : tree) {
            if (alive(p)) {
                p.destroyForcibly();
                killed = true;
            }
        }
        child.waitFor(2, TimeUnit.SECONDS);
        return killed;
    }

    private static boolean anyAlive(List<ProcessHandle> tree) {
        for (ProcessHandle p : tree) {
            if (alive(p)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@link ProcessHandle#isAlive()} counts a zombie (dead, not yet reaped) as alive. A
     * grandchild whose parent died first is reaped by init, maybe late; it runs no more, so on
     * Linux its {@code /proc/<pid>/stat} state {@code Z} counts as dead here.
     */
    static boolean alive(ProcessHandle p) {
        if (!p.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
            int close = stat.lastIndexOf(')');
            return close < 0 || close + 2 >= stat.length() || stat.charAt(close + 2) != 'Z';
        } catch (IOException | RuntimeException e) {
            return p.isAlive(); // no /proc (not Linux), or the process is gone
        }
    }
}
