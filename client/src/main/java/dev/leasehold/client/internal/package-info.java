/**
 * Client mechanics, not API: sessions (one socket, a writer and a reader thread each), the pool,
 * per-request state machines and the time arithmetic of PROTOCOL.md section 9. Depends only on
 * {@code java.*} and {@code dev.leasehold.protocol}.
 */
package dev.leasehold.client.internal;
