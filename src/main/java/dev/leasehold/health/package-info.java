/**
 * Actuator health adapters: the {@code leasehold} component (the whole picture: port, storage,
 * drain, recovery grace), {@code leaseholdReadiness} for the readiness group (should new sessions
 * be sent here?), and in cluster mode the {@code cluster} component (Raft role, leader, indexes,
 * storage). They read the server, the registry and the cluster node; they decide nothing.
 */
package dev.leasehold.health;
