package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;

/**
 * Values in a cluster (PROTOCOL.md 17.6, invariant 6.9) on three real server processes: a value
 * set by an {@code M} and one replaced by {@code V} are committed with their grants, a follower
 * answers {@code V} with {@code X 8}, and after the leader is killed ({@code kill -9}) the new
 * leader shows both values next to the same tokens (its {@code locks} endpoint), serves a
 * {@code V} on them, and the value ends with the grant's Release there.
 */
class ClusterValuesIntegrationTests {

    @TempDir
    Path dir;

    private ThreeNodeProcesses cluster;
    private final int[] httpPorts = {Ports.free(), Ports.free(), Ports.free()};

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            for (ServerProcess p : cluster.nodes) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }

    @Test
    void aValueSetByVSurvivesALeaderKill() throws Exception {
        cluster = new ThreeNodeProcesses(dir);
        for (int i = 0; i < 3; i++) {
            cluster.launch(i, cluster.props(i, "WARN", Map.of("server.port", String.valueOf(httpPorts[i]),
                    "management.endpoints.web.exposure.include", "health,locks")));
        }
        for (int i = 0; i < 3; i++) {
            cluster.awaitLog(i, "Leasehold protocol listening", 120_000);
        }
        cluster.awaitEveryMemberStored(120_000); // the leader is killed below: the other two must be able to elect
        int leader = cluster.servingLeader(60_000, -1);
        byte[] lead = Request.key("lead");
        byte[] campaign = Request.key("campaign");
        long token;
        long campaignToken;
        try (RawClient c = new RawClient(cluster.clientPorts[leader])) {
            token = ((Answer.Acquired) c.send(new Request.MilliAcquire(0, 0, 120, 1, 0, Request.key("n1"), lead)).next())
                    .token();
            assertThat(c.send(new Request.SetValue(token, Request.key("n2"), lead)).next())
                    .as("answered after its commit").isEqualTo(new Answer.ValueSet(token));
            assertThat(c.send(new Request.SetValue(token + 1000, Request.key("x"), lead)).next())
                    .isEqualTo(new Answer.NotHeld(token + 1000));
            campaignToken = ((Answer.Acquired) c.send(new Request.MilliAcquire(0, 0, 120, 2, 0,
                    new byte[] {'a', 0x0A, 'b'}, campaign)).next()).token();
        }
        int follower = (leader + 1) % 3;
        try (RawClient c = new RawClient(cluster.clientPorts[follower])) {
            Answer x = c.send(new Request.SetValue(token, Request.key("f"), lead)).next();
            assertThat(x).isEqualTo(new Answer.Error(8, "leader=127.0.0.1:" + cluster.clientPorts[leader]));
        }
        assertThat(locks(leader, "lead")).contains("\"token\":\"" + token + "\",\"value\":\"n2\",\"valueEncoding\":\"utf-8\"");

        long t0 = System.nanoTime();
        cluster.nodes[leader].kill9();
        int next = cluster.servingLeader(60_000, leader);
        System.out.printf("values across a leader kill: n%d killed, n%d grants %d ms later%n", leader + 1, next + 1,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        assertThat(locks(next, "lead")).as("the value V set, on the new leader next to the same token")
                .contains("\"token\":\"" + token + "\",\"value\":\"n2\",\"valueEncoding\":\"utf-8\"");
        assertThat(locks(next, "campaign")).as("the value of the grant's own M")
                .contains("\"token\":\"" + campaignToken + "\",\"value\":\"a\\nb\",\"valueEncoding\":\"utf-8\"");
        try (RawClient c = new RawClient(cluster.clientPorts[next])) {
            assertThat(c.send(new Request.SetValue(token, Request.key("n3"), lead)).next()).isEqualTo(new Answer.ValueSet(token));
            assertThat(locks(next, "lead")).contains("\"value\":\"n3\"");
            assertThat(c.send(new Request.Release(token, lead)).next()).isEqualTo(new Answer.Released(token));
            assertThat(c.send(new Request.SetValue(token, Request.key("n4"), lead)).next()).isEqualTo(new Answer.NotHeld(token));
            assertThat(locks(next, "lead")).contains("\"state\":\"free\"").doesNotContain("\"value\"");
        }
    }

    /** The node's {@code /actuator/locks/{key}} JSON. */
    private String locks(int node, String key) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + httpPorts[node] + "/actuator/locks/" + key))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }
}
