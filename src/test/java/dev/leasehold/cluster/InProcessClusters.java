package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Ports;

/**
 * Starts a test's three-node {@link InProcessCluster} on free loopback ports in a fresh temporary
 * directory, and after the test closes it, checks that no node reported a failed log, and
 * deletes the directory. Register it as an instance field with {@code @RegisterExtension}.
 */
final class InProcessClusters implements AfterEachCallback {

    private InProcessCluster cluster;
    private int[] clientPorts;
    private Path dir;

    /** Starts three nodes, each under {@code dir()/n<i>} (see {@link InProcessCluster#start}). */
    InProcessCluster start(Duration electionMin, Duration electionMax, Duration lockDelay, long snapshotEvery)
            throws IOException {
        dir = Files.createTempDirectory("leasehold-cluster-");
        clientPorts = new int[] {Ports.free(), Ports.free(), Ports.free()};
        cluster = InProcessCluster.start(dir, clientPorts, InProcessCluster.loopback(clientPorts), electionMin,
                electionMax, lockDelay, snapshotEvery);
        return cluster;
    }

    /** As above, with no lock-delay and the default snapshot interval. */
    InProcessCluster start(Duration electionMin, Duration electionMax) throws IOException {
        return start(electionMin, electionMax, Duration.ZERO, 100_000);
    }

    /** The directory the nodes of the cluster last started keep their data in. */
    Path dir() {
        return dir;
    }

    /** The protocol port of each node of the cluster last started. */
    int[] clientPorts() {
        return clientPorts;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (cluster != null) {
            cluster.close();
            boolean logFailed = cluster.logFailed();
            cluster = null;
            TestServer.deleteTree(dir);
            assertThat(logFailed).as("no node reported a failed log").isFalse();
        }
    }
}
