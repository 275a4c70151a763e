package dev.leasehold.deploy;

import static dev.leasehold.deploy.HelmChartTests.FULLNAME;
import static dev.leasehold.deploy.HelmChartTests.applicationYml;
import static dev.leasehold.deploy.HelmChartTests.container;
import static dev.leasehold.deploy.HelmChartTests.map;
import static dev.leasehold.deploy.HelmChartTests.render;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.leasehold.deploy.HelmChartTests.Rendered;

/**
 * The chart's cluster start-up shell, run: which pods start with {@code LEASEHOLD_CLUSTER_JOIN}
 * (those past {@code cluster.founders}). An integration test because it starts {@code /bin/sh}
 * (docs/testing.md: the suffix picks the runner).
 */
class HelmStartScriptIntegrationTests {

    @Test
    @SuppressWarnings("unchecked")
    void clusterOfFiveFormedWithThreeListsTheFoundersAndLetsTheOthersJoin() throws IOException {
        for (int replicas : new int[] {3, 5}) {
            Rendered r = Rendered.of(render(t -> t.set("cluster.enabled", true).set("cluster.replicas", replicas)));
            Map<String, Object> sts = r.one("StatefulSet");
            assertThat(map(sts, "spec").get("replicas")).isEqualTo(replicas);
            Map<String, Object> app = applicationYml(r.one("ConfigMap"));
            assertThat(map(map(map(app, "leasehold"), "cluster"), "peers")).as("peers are the founders only")
                    .containsOnlyKeys(FULLNAME + "-0", FULLNAME + "-1", FULLNAME + "-2");
            assertThat(map(map(map(app, "management"), "endpoints"), "web")).extracting(w -> map(w, "exposure"))
                    .extracting(e -> e.get("include")).isEqualTo("health,info,prometheus,cluster,snapshot");
            List<String> command = (List<String>) container(sts).get("command");
            for (int i = 0; i < replicas; i++) {
                assertThat(joinEnv(command, FULLNAME + "-" + i)).as("pod %d of %d", i, replicas).isEqualTo(i >= 3);
            }
        }
        // A cluster first formed with five: every pod is a founder.
        Rendered five = Rendered.of(render(t -> t.set("cluster.enabled", true).set("cluster.replicas", 5)
                .set("cluster.founders", 5)));
        assertThat(map(map(map(applicationYml(five.one("ConfigMap")), "leasehold"), "cluster"), "peers")).hasSize(5);
        assertThat(joinEnv((List<String>) container(five.one("StatefulSet")).get("command"), FULLNAME + "-4"))
                .isFalse();
        // Single-node mode keeps the image's entrypoint and exposes no cluster endpoint.
        Rendered single = Rendered.of(render(t -> t));
        assertThat(container(single.one("StatefulSet"))).doesNotContainKey("command");
        assertThat(applicationYml(single.one("ConfigMap"))).doesNotContainKey("management");
    }

    /**
     * Runs the rendered start-up shell with {@code HOSTNAME} set to a pod name and {@code java}
     * replaced by a function that prints whether {@code LEASEHOLD_CLUSTER_JOIN} is true: the
     * script that runs in the pod, not a reading of it.
     */
    static boolean joinEnv(List<String> command, String podName) throws IOException {
        assertThat(command.subList(0, 2)).containsExactly("/bin/sh", "-c");
        assertThat(command.get(2)).contains("exec java -XX:SharedArchiveFile=/app/leasehold.jsa -jar /app/leasehold.jar");
        String script = "java() { echo \"join=${LEASEHOLD_CLUSTER_JOIN:-false}\"; }\n"
                + command.get(2).replace("exec java", "java");
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", script).redirectErrorStream(true);
        pb.environment().remove("LEASEHOLD_CLUSTER_JOIN");
        pb.environment().put("HOSTNAME", podName);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        try {
            assertThat(p.waitFor()).as(out).isZero();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        assertThat(out).matches("join=(true|false)");
        return out.equals("join=true");
    }

}
