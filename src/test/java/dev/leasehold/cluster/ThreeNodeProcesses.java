package dev.leasehold.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;

/**
 * Three Leasehold server processes on loopback that form one cluster (ids {@code n1..n3}, free
 * client and Raft ports, each node's data directory under {@code dir}): the set-up the
 * process-based cluster tests share. The arrays are the test's to read and to change (a test
 * replaces {@code nodes[i]} when it restarts one); the test stops the processes.
 */
final class ThreeNodeProcesses {

    final String[] ids = {"n1", "n2", "n3"};
    final int[] clientPorts = new int[3];
    final int[] raftPorts = new int[3];
    final ServerProcess[] nodes = new ServerProcess[3];
    private final Path dir;

    /** Picks free ports for all three nodes; launches nothing. */
    ThreeNodeProcesses(Path dir) {
        this.dir = dir;
        for (int i = 0; i < 3; i++) {
            clientPorts[i] = Ports.free();
            raftPorts[i] = Ports.free();
        }
    }

    /**
     * Node {@code i}'s properties: its client port and id, Ratis logging at {@code ratisLevel},
     * then {@code extra}, then every peer's Raft and client address (so {@code extra} cannot
     * change the membership).
     */
    Map<String, String> props(int i, String ratisLevel, Map<String, String> extra) {
        Map<String, String> p = ServerProcess.props("leasehold.port", String.valueOf(clientPorts[i]),
                "leasehold.cluster.node-id", ids[i], "logging.level.org.apache.ratis", ratisLevel);
        p.putAll(extra);
        for (int j = 0; j < 3; j++) {
            p.put("leasehold.cluster.peers." + ids[j] + ".raft-address", "127.0.0.1:" + raftPorts[j]);
            p.put("leasehold.cluster.peers." + ids[j] + ".client-address", "127.0.0.1:" + clientPorts[j]);
        }
        return p;
    }

    /** Starts node {@code i} on its data directory with {@code props}, as {@code nodes[i]}. */
    ServerProcess launch(int i, Map<String, String> props) throws IOException {
        nodes[i] = ServerProcess.launch(dir.resolve(ids[i]), props);
        return nodes[i];
    }

    /** Waits until node {@code i} has logged {@code text}; the failure names the node and the wait. */
    void awaitLog(int i, String text, long timeoutMs) throws IOException, InterruptedException {
        nodes[i].awaitOutput(ids[i], text, timeoutMs);
    }
}
