/**
 * The Actuator {@code locks} endpoint: who holds a key, who waits, and the busiest keys, for the
 * engineer on call (docs/operations.md). Read-only; values come from the registry, computed on
 * this endpoint's own thread, never on an event loop.
 */
package dev.leasehold.inspect;
