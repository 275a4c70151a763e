package dev.leasehold.client;

import dev.leasehold.protocol.HoldMode;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * A fenced, fair, leased read/write lock on one key (PROTOCOL.md section 13): the read lock is a
 * shared grant ({@code S} with limit 0: many readers at once), the write lock an exclusive one
 * ({@code A}). The server grants in strict arrival order: a reader never overtakes a waiting
 * writer. Every hold has its own fencing token; tokens order readers and writers on one line.
 * Made by {@link LeaseholdClient#readWriteLock(String, int)}; see docs/shared.md for the
 * resource's side ("many readers, one writer").
 */
public final class FencedReadWriteLock implements ReadWriteLock {

    private final FencedLock read;
    private final FencedLock write;

    FencedReadWriteLock(LeaseholdClient client, String key, int leaseSeconds) {
        this.read = new FencedLock(client, key, leaseSeconds, HoldMode.READ);
        this.write = new FencedLock(client, key, leaseSeconds, HoldMode.EXCLUSIVE);
    }

    /** The read lock: a shared grant; many holders at once, none while a writer holds. */
    @Override
    public FencedLock readLock() {
        return read;
    }

    /** The write lock: an exclusive grant; no reader holds meanwhile. */
    @Override
    public FencedLock writeLock() {
        return write;
    }
}
