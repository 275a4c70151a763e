/**
 * Cluster mode (PROTOCOL.md section 10, docs/cluster.md): an embedded Ratis server per node whose
 * state machine is the replicated grant table, and the switch that lets only the ready leader
 * serve. Where things are:
 * <ul>
 * <li><b>The Raft host</b>: {@code ClusterNode} (lifecycle, Ratis's events, the
 *     {@code ServingGate}), configured by {@code RaftConfig} ({@code RaftOverrides} checks the
 *     operator's Ratis keys); {@code ClusterSettings} are its settings. The parts below see the
 *     node through one {@code RaftHost} (its server, division, leader, whether it runs).</li>
 * <li><b>Serving</b>: {@code ServingSwitch} promotes the ready leader and steps it down;
 *     {@code RosterTender} runs the periodic checks ({@code MajorityHeartbeats} decides when a
 *     leader stops early); all of it on one roles thread ({@code RolesThread}).</li>
 * <li><b>The log</b>: {@code Proposer} batches the registry's decisions and tokens,
 *     {@code LocalProposals} submits them to the local Raft server, {@code CommandCodec} is the
 *     entry format, {@code LockStateMachine} applies committed entries, {@code CommitGate}
 *     releases answers once committed.</li>
 * <li><b>Members with storage</b>: {@code Roster} (replicated) and {@code RosterKeeper};
 *     {@code Formation} decides whether empty storage may be formatted (and names the node's
 *     {@code Formation.Storage} state), {@code FormationRounds} probes the peers until it does
 *     (the disk-loss guard).</li>
 * <li><b>Membership changes</b>: {@code Membership} (add, remove, replace) on the node's
 *     {@code RaftHost}, refused by {@code MembershipRules}, reading through {@code MemberViews}
 *     into a {@code MemberView} (each member with its {@code Role});
 *     {@code LeaderChangeRetry} resends across a leader change.</li>
 * <li><b>Transport</b>: {@code PeerProbe} checks at start that the peers speak the same transport;
 *     {@code PeerChannels} resets gRPC channels when the leader is lost; mutual TLS lives in
 *     {@link dev.leasehold.cluster.tls}.</li>
 * </ul>
 * The registry and the server do not know this package: it plugs in through the registry's
 * {@code DecisionLog} and {@code TokenSource} and the server's {@code ServingGate}.
 */
package dev.leasehold.cluster;
