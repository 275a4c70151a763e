package dev.leasehold.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;

/** Every X code over a real socket: the answer, then that session closes, and only that one. */
class ProtocolErrorIntegrationTests {

    static TestServer server;

    @BeforeAll
    static void start() {
        server = TestServer.start(Map.of("leasehold.max-key-bytes", "16", "leasehold.frame-timeout", "500ms"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @ParameterizedTest(name = "X {1} for {0}")
    @CsvSource({
            "5A, 1, unknown op",
            "52 00 00 00 00 00 00 00 01 0A, 2, empty key",
            "52 00 00 00 00 00 00 00 01 C3 28 0A, 2, UTF-8",
            "41 05 00 00 00 00 00 00 00 00 01 6B 0A, 3, lease",
            "45 00 00 00 00 00 00 00 00 01 6B 0A, 3, lease",
            "52 00 00 00 00 00 00 00 01 31 32 33 34 35 36 37 38 39 30 31 32 33 34 35 36 37, 4, max-key-bytes",
            "41 0A 1E 00 00, 5, not finished",
            "50 00 00 00 00 00 00 00 07 41, 6, 0x41"})
    void answersXThenClosesOnlyThatSession(String hex, int code, String messagePart) throws Exception {
        String key = "x" + code + "-" + System.nanoTime() % 1_000_000; // within max-key-bytes 16
        try (RawClient holder = new RawClient(server.port()); RawClient bad = new RawClient(server.port());
                RawClient bystander = new RawClient(server.port())) {
            long token = ((Answer.Acquired) holder.send(new Request.Acquire(0, 30, 1, Request.key(key))).next()).token();
            // the bad session has a queued Acquire and a good frame answered before the bad one
            bad.send(new Request.Acquire(30, 5, 2, Request.key(key)), new Request.Ping(9));
            assertThat(bad.next()).isEqualTo(new Answer.Pong(9));
            bystander.send(new Request.Acquire(30, 5, 3, Request.key(key)), new Request.Ping(8));
            assertThat(bystander.next()).isEqualTo(new Answer.Pong(8)); // its Acquire is queued, behind bad's

            bad.sendHex(hex);
            Answer error = bad.next(5000);
            assertThat(error).isInstanceOf(Answer.Error.class);
            assertThat(((Answer.Error) error).code()).isEqualTo(code);
            assertThat(((Answer.Error) error).message()).contains(messagePart);
            assertThat(bad.closedByServer(3000)).as("the bad session is closed").isTrue();

            // the bad session's waiter was dropped: the release goes to the bystander
            holder.send(new Request.Release(token, Request.key(key)));
            assertThat(holder.next()).isEqualTo(new Answer.Released(token));
            assertThat(((Answer.Acquired) bystander.next()).owner()).isEqualTo(3);
            assertThat(holder.send(new Request.Ping(2)).next()).isEqualTo(new Answer.Pong(2));
        }
    }

    @org.junit.jupiter.api.Test
    void serverKeepsServingAfterManyBadSessions() throws IOException {
        for (int i = 0; i < 20; i++) {
            try (RawClient bad = new RawClient(server.port())) {
                bad.sendHex("FF FF FF");
                assertThat(bad.next()).isInstanceOf(Answer.Error.class);
            }
        }
        try (RawClient good = new RawClient(server.port())) {
            assertThat(good.send(new Request.Ping(5)).next()).isEqualTo(new Answer.Pong(5));
        }
    }
}
