package dev.leasehold.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.support.Wait;
import dev.leasehold.testing.support.Ports;

/**
 * The dashboard and the alert rules against a real Prometheus (Debian's {@code prometheus}, which
 * .ci/run installs; skipped, saying so, where it is absent): it scrapes a real single node and a
 * real three-node cluster (Spring Boot servers in this JVM, Actuator on loopback), the test drives
 * load on both, then every query of helm/leasehold/files/grafana-dashboard.json must return data,
 * and LeaseholdNoLeader (the shipped rules file) must fire when the cluster loses its majority
 * (the leader and one follower stopped) and resolve when a node comes back.
 */
class DashboardPrometheusIntegrationTests {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void everyDashboardQueryReturnsDataAndTheLeaderLossAlertFiresAndResolves() throws Exception {
        Path prometheusBinary = Tools.find("prometheus");
        assumeTrue(prometheusBinary != null, "prometheus is not installed (Debian: apt-get install prometheus; .ci/run does)");
        Path dir = Files.createTempDirectory("leasehold-prometheus");
        List<TestServer> servers = new ArrayList<>();
        TestServer[] cluster = new TestServer[3];
        Process prometheus = null;
        long testStart = System.nanoTime();
        long wallStart = System.currentTimeMillis() / 1000;
        try {
            // A single node and a three-node cluster, every port fixed up front (a node restarts on its own).
            TestServer single = TestServer.start(Map.of("leasehold.max-waiters-per-key", "1"), OwnHttpLoops.class);
            servers.add(single);
            ClusterPorts ports = new ClusterPorts();
            startAll(cluster, ports, dir, new int[] {0, 1, 2});
            int leader = awaitLeader(cluster, Duration.ofSeconds(60));

            int promPort = Ports.free();
            Path config = dir.resolve("prometheus.yml");
            Files.writeString(config, """
                    global:
                      scrape_interval: 2s
                      scrape_timeout: 2s
                      evaluation_interval: 1s
                    rule_files:
                      - %s
                    scrape_configs:
                      - job_name: leasehold-single
                        metrics_path: /actuator/prometheus
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                      - job_name: leasehold-cluster
                        metrics_path: /actuator/prometheus
                        static_configs:
                          - targets: ['127.0.0.1:%d', '127.0.0.1:%d', '127.0.0.1:%d']
                    """.formatted(PrometheusRulesIntegrationTests.RULES.toAbsolutePath(), single.httpPort(),
                    ports.http[0], ports.http[1], ports.http[2]));
            prometheus = new ProcessBuilder(prometheusBinary.toString(), "--config.file=" + config,
                    "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + promPort,
                    "--log.level=warn").redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile())
                    .start();
            String api = "http://127.0.0.1:" + promPort + "/api/v1/query?query=";
            await("Prometheus to answer and see all four targets up", Duration.ofSeconds(30),
                    () -> series(api, "up == 1") == 4);

            driveLoad(single, cluster);
            System.gc(); // the JVM's GC pause metric appears with the first collection

            // Every dashboard query returns at least one series.
            Map<String, Integer> counts = new LinkedHashMap<>();
            List<String> empty = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (String query : GrafanaDashboardTests.queries()) {
                String q = query.replace("$namespace", ".*").replace("$pod", ".*").replace("$__rate_interval", "30s");
                int n = series(api, q);
                while (n == 0 && System.nanoTime() - deadline < 0) {
                    Thread.sleep(500); // polling Prometheus until the rate window holds two scrapes, bounded
                    n = series(api, q);
                }
                counts.put(query, n);
                if (n == 0) {
                    empty.add(q);
                }
            }
            counts.forEach((q, n) -> System.out.println("dashboard query returned " + n + " series: " + q));
            assertThat(empty).as("dashboard queries that returned no data").isEmpty();

            // Leader loss: stop the leader and one follower (no majority), wait for the alert, bring one back.
            int follower = (leader + 1) % 3;
            long lossStart = System.nanoTime();
            long lossWall = System.currentTimeMillis() / 1000;
            cluster[leader].close();
            cluster[leader] = null;
            cluster[follower].close();
            cluster[follower] = null;
            String firing = "ALERTS{alertname=\"LeaseholdNoLeader\",alertstate=\"firing\"}";
            try {
                await("LeaseholdNoLeader to fire (30 s 'for' after the majority was lost)", Duration.ofSeconds(90),
                        () -> series(api, firing) > 0);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; Prometheus saw: up " + body(api, "up")
                        + "; role " + body(api, "leasehold_raft_role") + "; alerts " + body(api, "ALERTS"), e);
            }
            long firedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lossStart);
            long restart = System.nanoTime();
            long restartWall = System.currentTimeMillis() / 1000;
            startAll(cluster, ports, dir, new int[] {leader});
            await("LeaseholdNoLeader to resolve after node " + leader + " came back", Duration.ofSeconds(60),
                    () -> series(api, firing) == 0);
            long resolvedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restart);
            System.out.println("LeaseholdNoLeader fired " + firedAfter + " ms after the leader and a follower stopped;"
                    + " resolved " + resolvedAfter + " ms after node n" + leader + " restarted; whole test "
                    + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - testStart) + " s");
            saveRanges("http://127.0.0.1:" + promPort, wallStart, System.currentTimeMillis() / 1000 + 1,
                    "{\"at\": " + lossWall + ", \"what\": \"leader + follower stopped\"}, {\"at\": " + restartWall
                            + ", \"what\": \"n" + leader + " restarted\"}");
        } finally {
            if (prometheus != null) {
                prometheus.destroy();
                if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                    prometheus.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            for (TestServer s : cluster) {
                if (s != null) {
                    s.close();
                }
            }
            servers.forEach(TestServer::close);
            TestServer.deleteTree(dir);
        }
    }

    /**
     * Each node's HTTP server on event loops of its own: by default every Reactor Netty server of
     * the JVM shares the global ones, and closing one Boot context disposes them for all (every
     * other node's Actuator would stop answering Prometheus).
     */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class OwnHttpLoops {
        @org.springframework.context.annotation.Bean
        org.springframework.http.client.ReactorResourceFactory reactorResourceFactory() {
            org.springframework.http.client.ReactorResourceFactory f = new org.springframework.http.client.ReactorResourceFactory();
            f.setUseGlobalResources(false);
            return f;
        }
    }

    /** Fixed ports of the three cluster nodes. */
    private static final class ClusterPorts {
        final int[] client = {Ports.free(), Ports.free(), Ports.free()};
        final int[] raft = {Ports.free(), Ports.free(), Ports.free()};
        final int[] http = {Ports.free(), Ports.free(), Ports.free()};
    }

    /** Starts the given nodes at once (founders that start together form at once). */
    private static void startAll(TestServer[] cluster, ClusterPorts ports, Path dir, int[] which) {
        List<CompletableFuture<Void>> starts = new ArrayList<>();
        for (int i : which) {
            starts.add(CompletableFuture.runAsync(() -> cluster[i] = TestServer.start(nodeProps(i, ports, dir),
                    OwnHttpLoops.class)));
        }
        starts.forEach(CompletableFuture::join);
    }

    private static Map<String, String> nodeProps(int i, ClusterPorts ports, Path dir) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("leasehold.port", String.valueOf(ports.client[i]));
        p.put("server.port", String.valueOf(ports.http[i]));
        p.put("leasehold.data-dir", dir.resolve("n" + i).toString());
        p.put("leasehold.cluster.node-id", "n" + i);
        p.put("leasehold.cluster.election-timeout-min", "500ms");
        p.put("leasehold.cluster.election-timeout-max", "1000ms");
        p.put("logging.level.org.apache.ratis", "WARN");
        for (int j = 0; j < 3; j++) {
            p.put("leasehold.cluster.peers.n" + j + ".raft-address", "127.0.0.1:" + ports.raft[j]);
            p.put("leasehold.cluster.peers.n" + j + ".client-address", "127.0.0.1:" + ports.client[j]);
        }
        return p;
    }

    private static int awaitLeader(TestServer[] cluster, Duration atMost) throws InterruptedException {
        int[] found = {-1};
        await("a serving leader in the three-node cluster", atMost, () -> {
            for (int i = 0; i < cluster.length; i++) {
                if (cluster[i] != null && cluster[i].bean(dev.leasehold.cluster.ClusterNode.class).serving()) {
                    found[0] = i;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    /**
     * Grants, releases, a queued grant handed off (queue wait, hand-off gap), a Busy (one waiter
     * per key on the single node), Extend, Check and a lease that expires, on both deployments.
     */
    private static void driveLoad(TestServer single, TestServer[] cluster) throws Exception {
        List<String> clusterAddresses = new ArrayList<>();
        for (TestServer s : cluster) {
            clusterAddresses.add("127.0.0.1:" + s.port());
        }
        try (LeaseholdClient a = LeaseholdClient.create("127.0.0.1:" + single.port());
                LeaseholdClient b = LeaseholdClient.create("127.0.0.1:" + single.port());
                LeaseholdClient c = LeaseholdClient.create("127.0.0.1:" + single.port());
                LeaseholdClient ca = LeaseholdClient.create(clusterAddresses.toArray(String[]::new));
                LeaseholdClient cb = LeaseholdClient.create(clusterAddresses.toArray(String[]::new))) {
            LeaseholdClient[][] pairs = {{a, b}, {ca, cb}};
            TestServer[][] servers = {{single}, cluster};
            for (int p = 0; p < pairs.length; p++) {
                LeaseholdClient[] pair = pairs[p];
                TestServer[] group = servers[p];
                for (int i = 0; i < 20; i++) {
                    AcquireOutcome.Acquired held = (AcquireOutcome.Acquired) pair[0].acquire("load/" + i, 5, 30);
                    held.ticket().extend(30);
                    pair[0].check("load/" + i, held.ticket().token());
                    held.ticket().release();
                }
                // A queued Acquire granted by a Release: queue wait and the hand-off gap.
                AcquireOutcome.Acquired held = (AcquireOutcome.Acquired) pair[0].acquire("queued", 5, 30);
                CompletableFuture<AcquireOutcome> waiter = pair[1].acquireAsync("queued", 20, 30);
                // The waiter must be queued before the release: the hand-off is what is measured.
                // Only the leader queues, so the group's sum is the leader's count.
                Wait.until("the waiter on \"queued\" queued (" + group.length + " node(s); waiters seen)",
                        Duration.ofSeconds(10), () -> waitersOn(group), n -> n == 1);
                held.ticket().release();
                assertThat(waiter.get(20, TimeUnit.SECONDS)).isInstanceOf(AcquireOutcome.Acquired.class);
                ((AcquireOutcome.Acquired) waiter.get()).ticket().release();
                // A lease that runs out: 1 s, never released.
                assertThat(pair[0].acquire("expires", 5, 1)).isInstanceOf(AcquireOutcome.Acquired.class);
            }
            // Busy: the single node allows one waiter per key.
            AcquireOutcome.Acquired held = (AcquireOutcome.Acquired) a.acquire("busy", 5, 30);
            CompletableFuture<AcquireOutcome> first = b.acquireAsync("busy", 10, 30);
            await("one waiter queued on the single node", Duration.ofSeconds(10),
                    () -> single.bean(dev.leasehold.registry.LockRegistry.class).waiters() == 1);
            assertThat(c.acquire("busy", 10, 30)).isInstanceOf(AcquireOutcome.Busy.class);
            held.ticket().release();
            first.get(10, TimeUnit.SECONDS);
        }
        Thread.sleep(2500); // the 1 s leases must really run out (and be scraped) before the queries
    }

    private static int waitersOn(TestServer[] group) {
        int sum = 0;
        for (TestServer s : group) {
            sum += s.bean(dev.leasehold.registry.LockRegistry.class).waiters();
        }
        return sum;
    }

    /**
     * Every dashboard query's range result over the whole test (load, majority loss, recovery) to
     * target/dashboard-ranges.json, which bench/charts.py draws as the picture in docs/operations.md;
     * {@code events} (JSON objects: wall-clock second, what happened) become its marks on the time axis.
     */
    private static void saveRanges(String prometheus, long from, long to, String events) throws IOException {
        StringBuilder json = new StringBuilder("{\"start\": " + from + ", \"end\": " + to + ", \"events\": [" + events
                + "], \"queries\": [\n");
        String sep = "";
        for (String query : GrafanaDashboardTests.queries()) {
            String q = query.replace("$namespace", ".*").replace("$pod", ".*").replace("$__rate_interval", "30s");
            String answer = body(prometheus + "/api/v1/query_range?start=" + from + "&end=" + to + "&step=2&query=", q);
            json.append(sep).append("{\"expr\": ").append(jsonString(query)).append(", \"answer\": ")
                    .append(answer.startsWith("{") ? answer : jsonString(answer)).append('}'); // an I/O error as a string
            sep = ",\n";
        }
        Path out = Path.of("target", "dashboard-ranges.json");
        Files.createDirectories(out.getParent());
        Files.writeString(out, json.append("\n]}\n"));
        System.out.println("dashboard range results saved to " + out.toAbsolutePath());
    }

    private static String jsonString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> b.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
            }
        }
        return b.append('"').toString();
    }

    /** An instant query's answer, for failure messages. */
    private static String body(String api, String query) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(api + URLEncoder.encode(query, StandardCharsets.UTF_8)))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** The number of series an instant query returns (0 on an error answer, which the caller retries). */
    private static int series(String api, String query) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(api
                    + URLEncoder.encode(query, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return 0;
            }
            Matcher m = Pattern.compile("\"metric\":").matcher(r.body());
            int n = 0;
            while (m.find()) {
                n++;
            }
            return n;
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    private static void await(String what, Duration atMost, BooleanSupplier condition) throws InterruptedException {
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - start > atMost.toNanos()) {
                throw new AssertionError("waited " + atMost.toSeconds() + " s for " + what);
            }
            Thread.sleep(250); // polling a condition, bounded above
        }
    }
}
