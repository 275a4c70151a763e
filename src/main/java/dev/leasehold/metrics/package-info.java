/**
 * Micrometer meters, all prefixed {@code leasehold_}, none tagged by key: sessions, requests and
 * registry events ({@code LeaseholdMetrics}, {@code RegistryEventMetrics}), and in cluster mode
 * the Raft role, leader changes, commit time and apply lag ({@code ClusterMetrics}) and refused
 * peer connections ({@code PeerRefusalMetrics}). docs/metrics.md lists them.
 */
package dev.leasehold.metrics;
