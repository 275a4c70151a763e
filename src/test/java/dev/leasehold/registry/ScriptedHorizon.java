package dev.leasehold.registry;

import java.util.ArrayList;
import java.util.List;

/**
 * A lease horizon a test drives by hand: lease ends up to {@link #onDisk} are on disk, up to
 * {@link #writable} are granted with their answer waiting for {@link #write(boolean)}, beyond
 * that refused (a failing disk).
 */
final class ScriptedHorizon implements LeaseHorizon {

    long onDisk = Long.MAX_VALUE;
    long writable = Long.MAX_VALUE;
    private final List<Durable> waiting = new ArrayList<>();

    @Override
    public Approval approve(long nowNanos, long leaseEndNanos) {
        if (leaseEndNanos - onDisk <= 0) {
            return Approval.ON_DISK;
        }
        return leaseEndNanos - writable <= 0 ? Approval.AFTER_WRITE : Approval.REFUSED;
    }

    @Override
    public synchronized void whenDurable(Durable then) {
        waiting.add(then);
    }

    synchronized int waiting() {
        return waiting.size();
    }

    /** Completes the pending write: everything approved is on disk now, or the write failed. */
    void write(boolean ok) {
        List<Durable> run;
        synchronized (this) {
            run = new ArrayList<>(waiting);
            waiting.clear();
        }
        if (ok) {
            onDisk = writable;
        }
        run.forEach(d -> d.then(ok));
    }
}
