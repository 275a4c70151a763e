/**
 * Lock semantics as a deterministic state machine: key states (FREE, HELD, QUEUED, DELAYED,
 * SHARED), one FIFO wait queue per key for every hold mode, leases, lock-delay, fencing tokens and
 * capacity limits (PROTOCOL.md sections 5 to 7, 12 and 13), waits to the millisecond and Withdraw
 * (sections 14 and 15).
 *
 * <p>Plain Java with an injected clock: no Netty, no Spring, no I/O. One hold model for every
 * {@link dev.leasehold.protocol.HoldMode} (exclusive, read, permits): a {@code Hold} is one
 * grant's token, lease and lock-delay, with its transitions; a {@code KeyState} is a key's
 * exclusive hold (inline), its shared slots and its queue, with each mode's admission rule. The
 * shell around them: {@code Lanes} (the lanes and the one way into one), {@code KeyMachine}
 * (settle, grant, queue and timers under a lane lock), {@code Capacity} (the limits over all
 * keys), {@code Takeover} (grace, drain, promotion and reset) and {@code KeyScan} (inspect and
 * top), behind the facade {@link dev.leasehold.registry.LockRegistry}. Answers owed to
 * <em>other</em> requests (a waiter granted on a release, a wait that ran out) are handed to a
 * {@link dev.leasehold.registry.WaiterNotifier} after the lane lock is released. Every
 * state-changing decision also goes to a {@link dev.leasehold.registry.DecisionLog}, which
 * cluster mode turns into Raft log entries; a new cluster leader installs the holds it did not
 * decide with {@link dev.leasehold.registry.LockRegistry#promote}
 * ({@link dev.leasehold.registry.HeldGrant}). Nothing here knows Raft, the log format or the
 * replicated table.
 */
package dev.leasehold.registry;
