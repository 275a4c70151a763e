package dev.leasehold.client;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * Runs tasks one at a time, in submission order, on an underlying executor (the client's delivery
 * threads): a campaign's listener calls never overlap and never reorder, and no thread is its own.
 */
final class SerialExecutor implements Executor {

    private static final System.Logger LOG = System.getLogger("dev.leasehold.client");

    private final Executor threads;
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private boolean running;
    /** The thread running a task now, or null. */
    private volatile Thread current;

    SerialExecutor(Executor threads) {
        this.threads = threads;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (this) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        threads.execute(this::drain);
    }

    /** True on the thread that runs one of this executor's tasks now (a listener calling back in). */
    boolean inTask() {
        return current == Thread.currentThread();
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (this) {
                next = tasks.poll();
                if (next == null) {
                    running = false;
                    return;
                }
            }
            current = Thread.currentThread();
            try {
                next.run();
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.ERROR, "an election listener failed", e);
            } finally {
                current = null;
            }
        }
    }
}
