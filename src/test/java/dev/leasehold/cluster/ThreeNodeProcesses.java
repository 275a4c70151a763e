package dev.leasehold.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;
import dev.leasehold.testing.support.Wait;

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

    /** Stops every node still running (a test's clean-up). */
    void closeAll() {
        for (ServerProcess p : nodes) {
            if (p != null) {
                p.close();
            }
        }
    }

    /** What a node logs once the roster records all three founders as having stored the log. */
    static final String EVERY_MEMBER_STORED = "Roster (members that have stored the log): [n1, n2, n3]";

    /**
     * Waits until the roster records all three members as having stored the log (some node logs
     * {@link #EVERY_MEMBER_STORED}). Before that a founder whose JVM came up late may still be
     * without storage, or with an empty log whose vote Ratis does not count for a candidate with
     * commits (RATIS-1995): a leader killed then leaves the other two unable to elect, which is a
     * cluster not yet able to lose a member, not a failover bug. Call it before killing a leader.
     */
    void awaitEveryMemberStored(long timeoutMs) {
        Wait.until("the roster to record n1, n2 and n3 as having stored the log", Duration.ofMillis(timeoutMs),
                Duration.ofMillis(100), () -> {
                    StringBuilder last = new StringBuilder();
                    for (int i = 0; i < 3; i++) {
                        String out = nodes[i] == null ? "" : nodes[i].output();
                        if (out.contains(EVERY_MEMBER_STORED)) {
                            return new Wait.Seen<>(true, ids[i] + " logged it");
                        }
                        int at = out.lastIndexOf("Roster (members");
                        int end = at < 0 ? -1 : out.indexOf('\n', at);
                        last.append(ids[i]).append(": ").append(at < 0 ? "no roster line yet"
                                : out.substring(at, end < 0 ? out.length() : end)).append("; ");
                    }
                    return Wait.Seen.<Boolean>nothing(last.toString());
                }, Wait.Seen::found);
    }

    /** The last {@code lines} lines of each node's log, for a failure message. */
    String lastLogs(int lines) throws IOException {
        return ServerProcess.lastLogs(ids, nodes, lines);
    }

    /** Waits until node {@code i} has logged {@code text}; the failure names the node and the wait. */
    void awaitLog(int i, String text, long timeoutMs) throws IOException, InterruptedException {
        nodes[i].awaitOutput(ids[i], text, timeoutMs);
    }

    /**
     * The node, other than {@code not} (-1 for none) and other than stopped ones, that grants a
     * wait-0 probe Acquire: the serving leader. Bounded: an election takes real time.
     */
    int servingLeader(long timeoutMs, int not) {
        long[] owner = {100};
        return Wait.until("a node of " + String.join(", ", ids) + " to grant a probe", Duration.ofMillis(timeoutMs),
                Duration.ofMillis(100), () -> {
                    StringBuilder seen = new StringBuilder();
                    for (int i = 0; i < 3; i++) {
                        if (i == not || nodes[i] == null || !nodes[i].isAlive()) {
                            continue;
                        }
                        try (RawClient c = new RawClient(clientPorts[i])) {
                            c.send(new Request.Acquire(0, 1, owner[0], Request.key("leader-probe-" + owner[0]++)));
                            Answer a = c.poll(2000);
                            if (a instanceof Answer.Acquired) {
                                return new Wait.Seen<>(i, ids[i] + " granted");
                            }
                            seen.append(ids[i]).append(" answered ").append(a).append("; ");
                        } catch (IOException e) {
                            seen.append(ids[i]).append(' ').append(e).append("; ");
                        }
                    }
                    return Wait.Seen.<Integer>nothing(seen.toString());
                }, Wait.Seen::found).value();
    }
}
