/**
 * Durable state in {@code leasehold.data-dir}: the fencing-token high-water mark (and later the
 * lease horizon). Files are replaced atomically (write, fsync, rename, fsync the directory) on a
 * dedicated thread, ahead of need, so no I/O ever happens on an event loop or under a lock.
 */
package dev.leasehold.store;
