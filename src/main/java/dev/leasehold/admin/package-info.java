/**
 * Operator actions on a running cluster: the Actuator {@code cluster} endpoint (members, add,
 * remove, replace) and the filter that answers it only from the node's own loopback address
 * (docs/security.md, "Changing members").
 */
package dev.leasehold.admin;
