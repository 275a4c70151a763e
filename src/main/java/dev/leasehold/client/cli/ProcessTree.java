package dev.leasehold.client.cli;

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
        while (System.nanoTime() - killAtNanos < 0 && anyAlive(tree)) {
            Thread.sleep(Math.max(1, Math.min(POLL_NANOS, killAtNanos - System.nanoTime()) / 1_000_000L));
        }
        boolean killed = false;
        for (ProcessHandle p : List.copyOf(tree)) {
            if (p.isAlive()) {
                p.descendants().filter(d -> !tree.contains(d)).forEach(tree::add);
            }
        }
        for (ProcessHandle p : tree) {
            if (p.isAlive()) {
                p.destroyForcibly();
                killed = true;
            }
        }
        child.waitFor(2, TimeUnit.SECONDS);
        return killed;
    }

    private static boolean anyAlive(List<ProcessHandle> tree) {
        for (ProcessHandle p : tree) {
            if (p.isAlive()) {
                return true;
            }
        }
        return false;
    }
}
