/**
 * Mutual TLS on every Raft connection of a cluster node (docs/cluster.md, "Cluster TLS"). The
 * entry point is {@link dev.leasehold.cluster.tls.RaftTls}: it checks the node's certificate,
 * hands Ratis its server and client parameters, admits members added online and takes reloaded
 * material. Outside this package only {@code RaftTls}, {@code PeerRefusals} (the refusal counts
 * for metrics) and {@code PeerIdentities} (which certificate names which member) are used; the
 * trust manager that refuses non-members, the reloading key manager and the handshake
 * classifier are its inner parts.
 */
package dev.leasehold.cluster.tls;
