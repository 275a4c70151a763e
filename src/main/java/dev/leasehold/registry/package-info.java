/**
 * Lock semantics as a deterministic state machine: key states (FREE, HELD, QUEUED), FIFO wait
 * queues, leases, fencing tokens and capacity limits (PROTOCOL.md sections 5 to 7).
 *
 * <p>Plain Java with an injected clock: no Netty, no Spring, no I/O. The per-key transitions are
 * in {@code KeyState} (time and the next token are inputs, decisions are values);
 * {@link dev.leasehold.registry.LockRegistry} is the concurrent shell around them (lanes, global
 * limits, timer wheel, delivery). Answers owed to <em>other</em> requests (a waiter granted on a
 * release, a wait that ran out) are handed to a {@link dev.leasehold.registry.WaiterNotifier}
 * after the lane lock is released. Every state-changing decision also goes to a
 * {@link dev.leasehold.registry.DecisionLog}, which cluster mode turns into Raft log entries; a
 * new cluster leader installs the grants it did not decide with
 * {@link dev.leasehold.registry.LockRegistry#promote} ({@link dev.leasehold.registry.HeldGrant}).
 * Nothing here knows Raft, the log format or the replicated table.
 */
package dev.leasehold.registry;
