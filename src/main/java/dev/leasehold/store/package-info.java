/**
 * Durable state in {@code leasehold.data-dir}: the fencing-token high-water mark and the lease
 * horizon (with its clean-stop marker). Files are replaced atomically (write, fsync, rename, fsync
 * the directory) on dedicated threads, so no I/O ever happens on an event loop or under a lock;
 * an answer that needs a newer horizon waits on the horizon's thread, never the event loop.
 * What the previous run left ({@code PreviousRun}) decides the recovery grace of this one
 * ({@code RecoveryGrace} is the setting, {@code RecoveryPlan} the decision).
 */
package dev.leasehold.store;
