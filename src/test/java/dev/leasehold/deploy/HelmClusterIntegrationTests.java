package dev.leasehold.deploy;

import static dev.leasehold.deploy.HelmChartTests.applicationYml;
import static dev.leasehold.deploy.HelmChartTests.container;
import static dev.leasehold.deploy.HelmChartTests.list;
import static dev.leasehold.deploy.HelmChartTests.map;
import static dev.leasehold.deploy.HelmChartTests.ports;
import static dev.leasehold.deploy.HelmChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.ReleaseOutcome;
import dev.leasehold.deploy.HelmChartTests.Rendered;
import dev.leasehold.testing.Actuator;
import dev.leasehold.testing.support.Wait;

/**
 * Three server processes started with exactly what the Helm chart renders in cluster mode
 * ({@code cluster.enabled=true}, {@code cluster.replicas=3}) form a cluster and grant a lock.
 *
 * <p>Each "pod" runs the StatefulSet's own {@code command} (its {@code /bin/sh -c} start script)
 * with the container's rendered {@code env} ({@code fieldRef metadata.name} evaluated as the pod
 * name, {@code HOSTNAME} the pod name too), reads the ConfigMap's application.yml from a directory
 * standing in for {@code /config}, and runs the built server jar in place of
 * {@code /app/leasehold.jar}, with {@code java} on {@code PATH} being this JDK's. Only what a pod
 * gets from Kubernetes itself is replaced: the data directory (a temporary directory per pod),
 * {@code SPRING_CONFIG_ADDITIONAL_LOCATION} (the temporary {@code /config}), the pod's IP (pod
 * {@code i} binds {@code 127.0.0.(11+i)} through {@code LEASEHOLD_ADDRESS}, {@code SERVER_ADDRESS}
 * and {@code LEASEHOLD_CLUSTER_RAFTBINDADDRESS}; in a pod the wildcard address is that pod's IP
 * alone) and cluster DNS: a JDK hosts file per pod ({@code -Djdk.net.hosts.file}, appended to the
 * chart's {@code JAVA_TOOL_OPTIONS}) maps every pod DNS name of the headless Service to its
 * address, as the pod's {@code /etc/hosts} plus the cluster's DNS would.
 *
 * <p><b>Fixed ports, on purpose.</b> Unlike the rest of the suite (port 0, {@code Ports.free()}),
 * this test uses the chart's fixed ports (7420 lock, 7421 HTTP, 7430 Raft): the point is the
 * chart's own configuration, and the peers in its application.yml name those ports. On the
 * distinct loopback addresses 127.0.0.11-13 they are each pod's own, like ports on pod IPs, so the
 * three pods do not collide with each other; the test is skipped only when 127.0.0.11-13 cannot be
 * bound at all.
 *
 * <p>The client runs in this JVM, which cannot use the hosts file ({@code jdk.net.hosts.file} is
 * read once, when {@code InetAddress} is first used, long before a test runs): it is given the
 * pods' addresses, the leader's first, so its requests need no {@code X 8} hint (which names a pod
 * by its DNS name).
 */
class HelmClusterIntegrationTests {

    private static final int PODS = 3;
    private static final Pattern SERVES = Pattern.compile("Node (\\S+) serves as leader");
    /** JVM start, Boot context, Ratis election, on 2 noisy cores: generous, it only bounds a hang. */
    // 300 s, was 120 s: three JVMs start at once here, and at load average 34 (two builds and other
    // helpers on 2 cores) a pod took 74 s from launch to starting Ratis; it only bounds a hang.
    private static final long LEADER_TIMEOUT_MS = 300_000;
    private static final long HEALTH_TIMEOUT_MS = 60_000;

    private final List<Process> processes = new ArrayList<>();
    private final List<Path> logs = new ArrayList<>();
    private Path dir;

    @BeforeEach
    void podAddressesCanBeBound() throws IOException {
        for (int i = 0; i < PODS; i++) {
            String ip = podIp(i);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getByName(ip), 0));
            } catch (IOException e) {
                String why = "skipped: cannot bind " + ip + " (a pod's address here): " + e;
                System.out.println(why);
                Assumptions.assumeTrue(false, why);
            }
        }
        dir = Files.createTempDirectory("leasehold-helm-cluster");
    }

    @AfterEach
    void stopPodsAndDeleteFiles() throws InterruptedException {
        for (Process p : processes) {
            p.destroy(); // SIGTERM first, as Kubernetes does; the drain is not under test here
        }
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        keepLogs();
        if (dir != null) {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException ignored) {
                // best effort: the temporary directory
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void threePodsStartedAsTheChartRendersThemFormAClusterAndGrantALock() throws Exception {
        Rendered r = Rendered.of(render(t -> t.set("cluster.enabled", true).set("cluster.replicas", PODS)));
        Map<String, Object> sts = r.one("StatefulSet");
        assertThat(map(sts, "spec").get("replicas")).isEqualTo(PODS);
        String fullname = (String) map(sts, "metadata").get("name");
        Map<String, Object> c = container(sts);
        int lockPort = (Integer) ports(c).get("lock");
        Map<String, Object> readiness = map(map(c, "readinessProbe"), "httpGet");
        int probePort = (Integer) ports(c).get((String) readiness.get("port"));
        String probePath = (String) readiness.get("path");

        // The ConfigMap, as the /config every pod mounts.
        Path config = Files.createDirectories(dir.resolve("config"));
        Map<String, Object> configMap = r.one("ConfigMap");
        Files.writeString(config.resolve("application.yml"), (String) map(configMap, "data").get("application.yml"));

        // Cluster DNS: every host name the rendered peers use, mapped to its pod's address.
        Map<String, Object> peers = map(map(map(applicationYml(configMap), "leasehold"), "cluster"), "peers");
        List<String> pods = new ArrayList<>();
        for (int i = 0; i < PODS; i++) {
            pods.add(fullname + "-" + i);
        }
        assertThat(peers).containsOnlyKeys(pods);
        List<String> dns = new ArrayList<>();
        for (int i = 0; i < PODS; i++) {
            Map<String, Object> peer = map(peers, pods.get(i));
            Set<String> names = new LinkedHashSet<>();
            for (String address : List.of((String) peer.get("raft-address"), (String) peer.get("client-address"))) {
                names.add(address.substring(0, address.lastIndexOf(':')));
            }
            names.add(pods.get(i)); // the pod's own host name, which its /etc/hosts carries
            dns.add(podIp(i) + " " + String.join(" ", names));
        }

        // The start script as rendered, running the built jar where the image has /app/leasehold.jar
        // and its AppCDS archive (made in the image's build; not here, so left out).
        List<String> command = (List<String>) c.get("command");
        assertThat(command.subList(0, 2)).containsExactly("/bin/sh", "-c");
        String image = "-XX:SharedArchiveFile=/app/leasehold.jsa -jar /app/leasehold.jar";
        assertThat(command.get(2)).contains("exec java " + image);
        String script = command.get(2).replace(image, "-jar '" + serverJar() + "'");
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("java"), Path.of(System.getProperty("java.home"), "bin", "java"));

        long t0 = System.nanoTime();
        for (int i = 0; i < PODS; i++) {
            Path pod = Files.createDirectories(dir.resolve(pods.get(i)));
            // This pod's /etc/hosts plus cluster DNS. gethostname() here is this machine's name, not
            // the pod's: map it to the pod's address, as a pod's /etc/hosts maps its own name.
            List<String> hosts = new ArrayList<>(List.of("127.0.0.1 localhost"));
            hosts.addAll(dns);
            String ip = podIp(i);
            machineName().ifPresent(name -> hosts.add(ip + " " + name));
            Path hostsFile = Files.write(pod.resolve("hosts"), hosts);

            Map<String, String> env = new LinkedHashMap<>();
            env.put("PATH", bin + ":/usr/bin:/bin");
            env.put("HOSTNAME", pods.get(i));
            for (Map<String, Object> e : list(c, "env")) {
                String name = (String) e.get("name");
                if (e.containsKey("valueFrom")) {
                    assertThat(map(map(e, "valueFrom"), "fieldRef").get("fieldPath")).as(name).isEqualTo("metadata.name");
                    env.put(name, pods.get(i));
                } else {
                    env.put(name, String.valueOf(e.get("value")));
                }
            }
            assertThat(env).containsEntry("LEASEHOLD_CLUSTER_NODEID", pods.get(i))
                    .containsKeys("LEASEHOLD_DATA_DIR", "SPRING_CONFIG_ADDITIONAL_LOCATION", "JAVA_TOOL_OPTIONS");
            // What Kubernetes would provide: the volumes, the pod IP, the DNS.
            env.put("LEASEHOLD_DATA_DIR", Files.createDirectories(pod.resolve("data")).toString());
            env.put("SPRING_CONFIG_ADDITIONAL_LOCATION", "file:" + config + "/");
            env.put("LEASEHOLD_ADDRESS", podIp(i));
            env.put("SERVER_ADDRESS", podIp(i));
            env.put("LEASEHOLD_CLUSTER_RAFTBINDADDRESS", podIp(i));
            env.put("JAVA_TOOL_OPTIONS", env.get("JAVA_TOOL_OPTIONS") + " -Djdk.net.hosts.file=" + hostsFile);

            Path log = pod.resolve("output.log");
            logs.add(log);
            ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", script).directory(pod.toFile())
                    .redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().clear(); // a pod's environment is what the chart and the image set
            pb.environment().putAll(env);
            processes.add(pb.start());
        }

        // A leader, which every pod names.
        String leader = awaitLeader(pods);
        long leaderMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        for (int i = 0; i < PODS; i++) {
            assertThat(Files.readString(logs.get(i))).as(pods.get(i))
                    .contains("Leasehold protocol listening on " + podIp(i) + ":" + lockPort);
        }

        // A lock through the real client, on the pods' addresses, the leader's first.
        int leaderIndex = pods.indexOf(leader);
        List<InetSocketAddress> seeds = new ArrayList<>();
        for (int k = 0; k < PODS; k++) {
            seeds.add(new InetSocketAddress(InetAddress.getByName(podIp((leaderIndex + k) % PODS)), lockPort));
        }
        long grantMs;
        try (LeaseholdClient client = LeaseholdClient.create(ClientOptions.builder().poolSize(1).build(), seeds)) {
            AcquireOutcome outcome = client.acquire("helm/cluster", 30, 30);
            grantMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(outcome).as("%s", outcome).isInstanceOf(AcquireOutcome.Acquired.class);
            long token = ((AcquireOutcome.Acquired) outcome).ticket().token();
            assertThat(token).as("fencing token").isPositive();
            assertThat(client.release("helm/cluster", token, Duration.ofSeconds(30))).isEqualTo(ReleaseOutcome.RELEASED);
            System.out.printf("chart cluster: leader %s after %d ms, first grant (token %d) after %d ms%n",
                    leader, leaderMs, token, grantMs);
        }

        // Every pod ready, on the readiness probe the StatefulSet renders.
        for (int i = 0; i < PODS; i++) {
            awaitUp(new Actuator(podIp(i), probePort), probePath, pods.get(i), logs.get(i));
        }
    }

    /** {@code -Dleasehold.cluster.logs=DIR} keeps the pods' output, as the other cluster tests do. */
    private void keepLogs() {
        String keep = System.getProperty("leasehold.cluster.logs");
        if (keep == null) {
            return;
        }
        try {
            Path out = Files.createDirectories(Path.of(keep));
            long now = System.currentTimeMillis();
            for (Path log : logs) {
                Files.copy(log, out.resolve("helm-cluster-" + log.getParent().getFileName() + "-" + now + ".log"));
            }
        } catch (IOException e) {
            System.out.println("could not keep the pod logs: " + e);
        }
    }

    /** The pod's address: 127.0.0.11, .12, .13. */
    private static String podIp(int i) {
        return "127.0.0." + (11 + i);
    }

    /** This machine's host name, if this JVM can resolve it (it is what {@code gethostname()} says). */
    private static java.util.Optional<String> machineName() {
        try {
            return java.util.Optional.of(InetAddress.getLocalHost().getHostName());
        } catch (IOException e) {
            return java.util.Optional.empty();
        }
    }

    private static String serverJar() {
        String jar = System.getProperty("leasehold.server.jar");
        assertThat(jar).as("system property leasehold.server.jar (set by the build: run through Maven)").isNotNull();
        assertThat(Path.of(jar)).as("the built server jar").isRegularFile();
        return Path.of(jar).toAbsolutePath().toString();
    }

    /** Waits until one pod serves as leader and every pod logged it as the leader; its node id. */
    private String awaitLeader(List<String> pods) throws IOException, InterruptedException {
        List<String> out = new ArrayList<>();
        try {
            // The outputs are files other processes write; nothing signals a new line, so poll.
            return Wait.until("one leader every pod of " + pods + " names", Duration.ofMillis(LEADER_TIMEOUT_MS),
                    Duration.ofMillis(100), () -> {
                        out.clear();
                        for (Path log : logs) {
                            out.add(Files.readString(log, StandardCharsets.UTF_8));
                        }
                        for (int i = 0; i < pods.size(); i++) {
                            if (!processes.get(i).isAlive()) {
                                throw Wait.giveUp(pods.get(i) + " exited with " + processes.get(i).exitValue() + ":\n"
                                        + out.get(i));
                            }
                        }
                        List<String> named = new ArrayList<>();
                        for (int i = 0; i < out.size(); i++) {
                            Matcher m = SERVES.matcher(out.get(i));
                            String leader = null;
                            while (m.find()) {
                                leader = m.group(1); // the latest
                            }
                            String line = "leader is now " + leader;
                            if (leader != null && out.stream().allMatch(x -> x.contains(line))) {
                                return new Wait.Seen<>(leader, "every pod names " + leader);
                            }
                            Matcher now = Pattern.compile("leader is now (\\S+)").matcher(out.get(i));
                            String latest = null;
                            while (now.find()) {
                                latest = now.group(1);
                            }
                            named.add(pods.get(i) + (latest == null ? " logged no leader yet" : " logged leader " + latest)
                                    + (leader == null ? "" : ", " + leader + " serves as leader"));
                        }
                        return Wait.Seen.<String>nothing(String.join("; ", named));
                    }, Wait.Seen::found).value();
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + String.join("\n---\n", out), e);
        }
    }

    private static void awaitUp(Actuator pod, String path, String name, Path log) throws Exception {
        try {
            // A follower's readiness follows the leader it learns of; poll, nothing signals it.
            Wait.until(name + " " + path + " to say UP", Duration.ofMillis(HEALTH_TIMEOUT_MS), Duration.ofMillis(200),
                    () -> {
                        try {
                            Actuator.Response r = pod.get(path);
                            return r.status() + " " + r.body();
                        } catch (IllegalStateException e) {
                            return e.getMessage(); // not listening yet
                        }
                    }, last -> last.startsWith("200 ") && last.contains("\"status\":\"UP\""));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + Files.readString(log), e);
        }
    }
}
