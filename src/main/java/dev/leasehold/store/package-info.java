/**
 * Durable state in {@code leasehold.data-dir}: the fencing-token high-water mark and the lease
 * horizon (with its clean-stop marker). Files are replaced atomically (write, fsync, rename, fsync
 * the directory) on dedicated threads, so no I/O ever happens on an event loop or under a lock;
 * an answer that needs a newer horizon waits on the horizon's thread, never the event loop.
 */
package dev.leasehold.store;
