package dev.leasehold.deploy;

import static dev.leasehold.deploy.HelmChartTests.list;
import static dev.leasehold.deploy.HelmChartTests.map;
import static dev.leasehold.deploy.HelmChartTests.render;
import static dev.leasehold.deploy.HelmChartTests.FULLNAME;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.leasehold.client.cli.Main;
import dev.leasehold.protocol.TokenFloorSnapshot;
import dev.leasehold.testing.ServerProcess;
import dev.leasehold.testing.support.Ports;

/**
 * The chart's opt-in backup CronJob (docs/deploy.md "Disaster recovery"): rendered by real Helm,
 * then its script run as rendered with {@code sh}, against a real server process. Only the
 * cluster runtime is stood in for: a {@code kubectl} on the PATH that plays {@code kubectl exec}
 * (pod 0 answers as a follower does, exit 68; pod 1 runs the real command line against the real
 * server), and the {@code /backup} volume is a temp directory. Checked: the follower is passed
 * over, each run leaves one verified snapshot, and only {@code backup.keep} are kept.
 */
class HelmBackupCronJobIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void offByDefaultAndAVolumeIsRequired() {
        assertThat(HelmChartTests.Rendered.of(render(t -> t)).all("CronJob")).isEmpty();
        assertThatThrownBy(() -> render(t -> t.set("backup.enabled", true)))
                .hasMessageContaining("backup.enabled needs backup.volume");
    }

    @Test
    void theRenderedJobSavesVerifiedSnapshotsFromTheNodeThatAnswersAndKeepsTheNewest() throws Exception {
        HelmChartTests.Rendered r = HelmChartTests.Rendered.of(render(t -> t.set("cluster.enabled", true)
                .set("backup.enabled", true).set("backup.keep", 2).set("backup.schedule", "0 * * * *")
                .set("backup.volume.persistentVolumeClaim.claimName", "lh-backups")));
        Map<String, Object> cron = r.one("CronJob");
        assertThat(map(cron, "spec").get("schedule")).isEqualTo("0 * * * *");
        Map<String, Object> pod = map(map(map(map(cron, "spec"), "jobTemplate"), "spec"), "template");
        Map<String, Object> spec = map(pod, "spec");
        assertThat(spec.get("serviceAccountName")).isEqualTo(FULLNAME + "-backup");
        assertThat(list(spec, "volumes")).anySatisfy(v -> assertThat(v).containsEntry("name", "backup")
                .containsEntry("persistentVolumeClaim", Map.of("claimName", "lh-backups")));
        Map<String, Object> container = list(spec, "containers").get(0);
        Map<String, String> env = new java.util.HashMap<>();
        for (Map<String, Object> e : list(container, "env")) {
            env.put((String) e.get("name"), String.valueOf(e.get("value")));
        }
        assertThat(env).containsEntry("PODS", FULLNAME + "-0 " + FULLNAME + "-1 " + FULLNAME + "-2")
                .containsEntry("KEEP", "2");
        Map<String, Object> role = r.one("Role");
        assertThat(list(role, "rules")).anySatisfy(rule -> assertThat(rule).containsEntry("resources",
                List.of("pods/exec")).containsEntry("resourceNames", List.of(FULLNAME + "-0", FULLNAME + "-1",
                FULLNAME + "-2")));
        @SuppressWarnings("unchecked")
        String script = ((List<String>) container.get("command")).get(2);

        int http = Ports.free();
        try (ServerProcess server = ServerProcess.start(dir.resolve("data"), ServerProcess.props("server.port",
                String.valueOf(http), "management.endpoints.web.exposure.include", "health,snapshot"))) {
            Path backup = Files.createDirectories(dir.resolve("backup"));
            Path bin = Files.createDirectories(dir.resolve("bin"));
            Path kubectl = bin.resolve("kubectl");
            Files.writeString(kubectl, """
                    #!/bin/sh
                    # Plays: kubectl exec POD -c leasehold -- bin/leasehold ARGS...
                    case "$2" in
                      *-0) echo "leasehold: HTTP 503: error: node n1 is not the serving leader" >&2; exit 68 ;;
                    esac
                    shift 6
                    exec "%s" -cp "%s" %s "$@" --http http://127.0.0.1:%d
                    """.formatted(Path.of(System.getProperty("java.home"), "bin", "java"),
                    Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI()),
                    Main.class.getName(), http));
            Files.setPosixFilePermissions(kubectl, PosixFilePermissions.fromString("rwxr-xr-x"));
            String asRun = script.replace("/backup", backup.toString());
            for (int run = 0; run < 3; run++) {
                if (run > 0) {
                    Thread.sleep(1100); // the file name has one-second resolution: a new second, a new file
                }
                ProcessBuilder pb = new ProcessBuilder("sh", "-c", asRun).redirectErrorStream(true);
                pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
                env.remove("HOME"); // the pod's emptyDir; here the test's own
                pb.environment().putAll(env);
                Process p = pb.start();
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(p.exitValue()).as(out).isZero();
                assertThat(out).contains("saved " + backup).contains("from " + FULLNAME + "-1");
            }
            List<Path> kept;
            try (Stream<Path> s = Files.list(backup)) {
                kept = s.sorted().toList();
            }
            assertThat(kept).as("backup.keep").hasSize(2)
                    .allMatch(f -> f.getFileName().toString().matches("leasehold-\\d{8}T\\d{6}Z\\.snapshot"));
            for (Path f : kept) {
                TokenFloorSnapshot s = TokenFloorSnapshot.decode(Files.readString(f));
                assertThat(s.mode()).isEqualTo("single");
                assertThat(s.tokenFloor()).isPositive();
            }
        }
    }
}
