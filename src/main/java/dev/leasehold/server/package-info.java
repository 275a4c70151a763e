/**
 * Reactor Netty glue: the TCP server lifecycle, the frame decoder and answer encoder, per-session
 * state, dispatch to the {@link dev.leasehold.registry.LockRegistry}, and the one policy for bad
 * input (an {@code X} frame, flush, close that session only, one WARN line).
 *
 * <p>Event loops never block here: registry calls take a short lane lock and return; answers
 * owed to waiters are handed to the waiter's own event loop.
 */
package dev.leasehold.server;
