package dev.leasehold.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.function.IntFunction;

import dev.leasehold.testing.support.Wait;

/** Waits on a cluster of server processes' replication, read from each node's health. */
public final class Replication {

    private Replication() {
    }

    /**
     * Waits until every live node has applied what {@code leader} has committed. A node that
     * started late has an empty log until the leader reaches it, and Ratis (RATIS-1995) does not
     * count an empty-log node's vote for a candidate that has commits: killing or cutting off the
     * leader before then leaves the other two unable to elect, whatever the fault.
     *
     * @param names the nodes' ids, for the messages
     * @param nodes the processes (a null or dead one is not waited for)
     * @param actuator each node's Actuator, by index
     * @param before what the wait comes before, for the message (e.g. "before round 3"), or ""
     * @throws AssertionError naming the node, the index it has applied and the time waited, with
     *         every node's last 30 log lines, when {@code atMost} (shared by the nodes) runs out
     */
    public static void awaitEveryNodeApplied(String[] names, ServerProcess[] nodes, IntFunction<Actuator> actuator,
            int leader, Duration atMost, String before) throws IOException {
        long commit = health(actuator, leader).<Number>json("components.cluster.details.commitIndex").longValue();
        long start = System.nanoTime();
        for (int i = 0; i < nodes.length; i++) {
            int node = i;
            try {
                // Polling other processes; one deadline for all of them.
                Wait.until(names[i] + " to apply index " + commit + " (" + names[leader] + "'s commit index) " + before,
                        atMost.minusNanos(System.nanoTime() - start), Duration.ofMillis(100),
                        () -> nodes[node] == null || !nodes[node].isAlive() ? Long.MAX_VALUE
                                : health(actuator, node).<Number>json("components.cluster.details.appliedIndex").longValue(),
                        applied -> applied >= commit);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n" + ServerProcess.lastLogs(names, nodes, 30), e);
            }
        }
    }

    private static Actuator.Response health(IntFunction<Actuator> actuator, int node) {
        return actuator.apply(node).get("/actuator/health");
    }
}
