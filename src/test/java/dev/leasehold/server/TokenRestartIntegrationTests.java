package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/** Tokens never go backwards across a restart on the same data directory (PROTOCOL.md 6.2). */
class TokenRestartIntegrationTests {

    @Test
    void firstTokenAfterARestartIsAboveEveryTokenIssuedBefore() throws Exception {
        Path dir = Files.createTempDirectory("leasehold-restart");
        try {
            Map<String, String> props = Map.of("leasehold.data-dir", dir.toString(),
                    "leasehold.token-block-size", "10", "leasehold.recovery-grace", "0s");
            long highest = 0;
            for (int run = 0; run < 3; run++) {
                TestServer server = TestServer.start(props);
                try (RawClient c = new RawClient(server.port())) {
                    for (int i = 0; i < 25; i++) { // crosses several 10-token blocks
                        Answer a = c.send(new Request.Acquire(0, 1, i, Request.key("r" + run + "-" + i))).next();
                        for (int retry = 0; a instanceof Answer.Busy && retry < 100; retry++) {
                            // 10-token blocks run out faster than fsync refills them: Busy, never a guess
                            Thread.sleep(10); // real time: the token writer's fsync must refill the block
                            a = c.send(new Request.Acquire(0, 1, i, Request.key("r" + run + "-" + i))).next();
                        }
                        long token = ((Answer.Acquired) a).token();
                        assertThat(token).as("run %d", run).isGreaterThan(highest);
                        highest = token;
                    }
                } finally {
                    server.close();
                }
            }
        } finally {
            TestServer.deleteTree(dir);
        }
    }
}
