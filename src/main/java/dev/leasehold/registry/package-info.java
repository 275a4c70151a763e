/**
 * Lock semantics as a deterministic state machine: key states (FREE, HELD, QUEUED), FIFO wait
 * queues, leases, fencing tokens and capacity limits (PROTOCOL.md sections 5 to 7).
 *
 * <p>Plain Java with an injected clock: no Netty, no Spring, no I/O. Decisions are returned as
 * results to the caller; answers owed to <em>other</em> requests (a waiter granted on a release,
 * a wait that ran out) are handed to a {@link dev.leasehold.registry.WaiterNotifier} after the
 * registry's internal lock is released. That keeps the registry usable as the apply function of
 * a replicated log later.
 */
package dev.leasehold.registry;
