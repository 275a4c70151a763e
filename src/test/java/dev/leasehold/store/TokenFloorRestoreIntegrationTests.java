package dev.leasehold.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.cli.CliProcess;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;

/**
 * Backup and restore of a single node's token floor on real processes (docs/cluster.md "Backup
 * and restore of the token floor"): grants, a snapshot saved with the real command line
 * ({@code leasehold admin snapshot save}), more grants, the process killed and its data directory
 * deleted; a corrupt copy of the snapshot is refused at start-up; the intact one, restored with
 * {@code leasehold.restore-from} on a new directory, gives a first token above every token seen
 * before, and the node starts again on that directory with the setting still in place.
 */
class TokenFloorRestoreIntegrationTests {

    private static final long BLOCK = 1000;

    @TempDir
    Path dir;

    private ServerProcess node;
    private CliProcess cli;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
        if (cli != null) {
            cli.killAll();
        }
    }

    @Test
    void aSingleNodeRestoredFromASnapshotIssuesTokensAboveEveryTokenSeenBefore() throws Exception {
        cli = new CliProcess(Files.createDirectories(dir.resolve("cli")));
        int http = Ports.free();
        Path data = dir.resolve("data");
        node = ServerProcess.start(data, props(http, null));
        long maxSeen = grants(node.port(), 30, 0);

        Path file = dir.resolve("floor.snapshot");
        CliProcess.Result saved = cli.run("admin", "snapshot", "save", file.toString(), "--http",
                "http://127.0.0.1:" + http);
        assertThat(saved.exitCode()).as(saved.out() + saved.err()).isZero();
        assertThat(saved.out()).contains("saved " + file).contains("single-node snapshot");
        TokenFloorSnapshot snapshot = TokenFloorSnapshot.decode(Files.readString(file));
        assertThat(snapshot.tokenFloor()).as("the reserved high-water mark").isGreaterThanOrEqualTo(maxSeen);
        maxSeen = Math.max(maxSeen, grants(node.port(), 30, 100)); // issued after the snapshot

        node.kill9();
        node.close();
        deleteTree(data);

        Path corrupt = dir.resolve("corrupt.snapshot");
        Files.writeString(corrupt, Files.readString(file).replace("token-floor " + snapshot.tokenFloor(),
                "token-floor " + (snapshot.tokenFloor() - 1)));
        try (ServerProcess refused = ServerProcess.launch(dir.resolve("other"), props(Ports.free(), corrupt))) {
            assertThat(refused.awaitExit(60_000)).as("start-up fails").isNotNull().isNotZero();
            assertThat(refused.output()).contains("leasehold.restore-from").contains("does not verify")
                    .contains("corrupt");
        }
        assertThat(dir.resolve("other").resolve("tokens")).doesNotExist();

        Path restored = dir.resolve("restored");
        node = ServerProcess.start(restored, props(Ports.free(), file));
        long first = grants(node.port(), 1, 200);
        System.out.printf("TokenFloorRestoreIntegrationTests (single node): highest token before the loss %d, "
                + "snapshot floor %d, first token after the restore %d%n", maxSeen, snapshot.tokenFloor(), first);
        assertThat(first).isGreaterThan(maxSeen).isGreaterThan(snapshot.tokenFloor() + BLOCK);
        assertThat(node.output()).contains("Restored from " + file);

        node.close(); // a graceful stop; the setting stays: the same snapshot on its own directory is accepted
        node = ServerProcess.start(restored, props(Ports.free(), file));
        assertThat(grants(node.port(), 1, 300)).isGreaterThan(first);
        assertThat(node.output()).contains("was restored from it before");
    }

    private Map<String, String> props(int http, Path restoreFrom) {
        Map<String, String> p = ServerProcess.props("server.port", String.valueOf(http),
                "management.endpoints.web.exposure.include", "health,snapshot",
                "leasehold.token-block-size", String.valueOf(BLOCK), "leasehold.recovery-grace", "0s");
        if (restoreFrom != null) {
            p.put("leasehold.restore-from", restoreFrom.toString());
        }
        return p;
    }

    /** {@code n} grants of fresh keys, each released; returns the highest token. */
    private static long grants(int port, int n, int from) throws IOException {
        long max = 0;
        try (RawClient c = new RawClient(port)) {
            for (int i = 0; i < n; i++) {
                String key = "k" + (from + i);
                c.send(new Request.Acquire(0, 5, 1, key.getBytes(StandardCharsets.UTF_8)));
                Answer a = c.next(5000);
                assertThat(a).as(key).isInstanceOf(Answer.Acquired.class);
                long token = ((Answer.Acquired) a).token();
                max = Math.max(max, token);
                c.send(new Request.Release(token, key.getBytes(StandardCharsets.UTF_8)));
                c.next(5000);
            }
        }
        return max;
    }

    private static void deleteTree(Path p) throws IOException {
        try (var s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }
}
