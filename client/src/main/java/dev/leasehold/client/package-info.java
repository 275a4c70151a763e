/**
 * The official Leasehold client (JDK only). Start with
 * {@link dev.leasehold.client.LeaseholdClient}; outcomes are
 * {@link dev.leasehold.client.AcquireOutcome}, grants are {@link dev.leasehold.client.Ticket}.
 * Mechanics live in {@code dev.leasehold.client.internal} and are not API.
 */
package dev.leasehold.client;
