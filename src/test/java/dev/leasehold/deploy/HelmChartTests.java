package dev.leasehold.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.TemplateCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import dev.leasehold.config.LeaseholdProperties;
import dev.leasehold.store.RecoveryGrace;

/**
 * The Helm chart in {@code helm/leasehold}, rendered by real Helm (helm-java embeds Helm 3.16)
 * and checked object by object after parsing the output with SnakeYAML.
 */
class HelmChartTests {

    static final Path CHART = Path.of("helm", "leasehold");
    static final String RELEASE = "lh";
    static final String FULLNAME = "lh-leasehold";

    // ---------------------------------------------------------------- lint

    @Test
    void strictLintPasses() {
        LintResult result = new Helm(CHART).lint().strict().call();
        assertThat(result.getMessages()).as("lint messages")
                .noneMatch(m -> m.contains("[ERROR]") || m.contains("[WARNING]"));
        assertThat(result.isFailed()).as("strict lint failed: %s", result.getMessages()).isFalse();
    }

    // ---------------------------------------------------------------- defaults

    @Test
    void defaultsRenderTheExpectedObjects() {
        List<Map<String, Object>> docs = render(t -> t);
        assertThat(docs).extracting(d -> d.get("kind") + "/" + name(d)).containsExactlyInAnyOrder(
                "ConfigMap/" + FULLNAME,
                "Service/" + FULLNAME,
                "Service/" + FULLNAME + "-headless",
                "StatefulSet/" + FULLNAME,
                "PodDisruptionBudget/" + FULLNAME);
    }

    @Test
    void statefulSetRunsOneReplicaWithPortsProbesAndPersistentData() {
        Rendered r = Rendered.of(render(t -> t));
        Map<String, Object> sts = r.one("StatefulSet");
        Map<String, Object> spec = map(sts, "spec");
        assertThat(spec.get("replicas")).isEqualTo(1);
        assertThat(spec.get("serviceName")).isEqualTo(FULLNAME + "-headless");
        assertThat(map(r.named("Service", FULLNAME + "-headless"), "spec").get("clusterIP")).isEqualTo("None");

        Map<String, Object> pod = map(map(spec, "template"), "spec");
        assertThat(pod.get("enableServiceLinks")).as("LEASEHOLD_PORT=tcp://... would break binding").isEqualTo(false);
        assertThat(pod.get("automountServiceAccountToken")).isEqualTo(false);
        Map<String, Object> c = container(sts);
        assertThat(c.get("image")).isEqualTo("leasehold:0.1.0");
        assertThat(ports(c)).containsEntry("lock", 7420).containsEntry("http", 7421);

        assertProbe(c, "livenessProbe", "/actuator/health/liveness");
        assertProbe(c, "readinessProbe", "/actuator/health/readiness");
        assertProbe(c, "startupProbe", "/actuator/health/liveness");

        // The data directory: a claim per pod, mounted where leasehold.data-dir points.
        List<Map<String, Object>> claims = list(spec, "volumeClaimTemplates");
        assertThat(claims).hasSize(1);
        Map<String, Object> claim = claims.get(0);
        assertThat(map(claim, "metadata").get("name")).isEqualTo("data");
        assertThat(strings(map(claim, "spec"), "accessModes")).containsExactly("ReadWriteOnce");
        assertThat(map(map(map(claim, "spec"), "resources"), "requests").get("storage")).isEqualTo("1Gi");
        assertThat(map(claim, "spec")).doesNotContainKey("storageClassName");
        assertThat(mounts(c)).containsEntry("data", "/data").containsEntry("config", "/config")
                .containsEntry("tmp", "/tmp");
        assertThat(volumes(pod)).doesNotContainKey("data"); // it comes from the claim template
        assertThat(map(volumes(pod).get("config"), "configMap").get("name")).isEqualTo(FULLNAME);
        assertThat(volumes(pod).get("tmp")).containsKey("emptyDir");

        assertThat(env(c))
                .containsEntry("SPRING_CONFIG_ADDITIONAL_LOCATION", "file:/config/")
                .containsEntry("LEASEHOLD_DATA_DIR", "/data")
                .containsEntry("JAVA_TOOL_OPTIONS", "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError");
        assertThat(map(c, "resources")).containsKeys("requests", "limits");
        assertThat(map(map(c, "resources"), "limits").get("memory")).isEqualTo("512Mi");
    }

    @Test
    void podIsNonRootWithReadOnlyRootFilesystem() {
        Map<String, Object> sts = Rendered.of(render(t -> t)).one("StatefulSet");
        Map<String, Object> pod = map(map(map(sts, "spec"), "template"), "spec");
        Map<String, Object> podSc = map(pod, "securityContext");
        assertThat(podSc).containsEntry("runAsNonRoot", true).containsEntry("runAsUser", 10001)
                .containsEntry("runAsGroup", 10001).containsEntry("fsGroup", 10001);
        assertThat(map(podSc, "seccompProfile").get("type")).isEqualTo("RuntimeDefault");

        Map<String, Object> sc = map(container(sts), "securityContext");
        assertThat(sc).containsEntry("runAsNonRoot", true).containsEntry("runAsUser", 10001)
                .containsEntry("readOnlyRootFilesystem", true).containsEntry("allowPrivilegeEscalation", false);
        assertThat(strings(map(sc, "capabilities"), "drop")).containsExactly("ALL");
    }

    @Test
    void serviceExposesBothPortsAndScrapeAnnotations() {
        Rendered r = Rendered.of(render(t -> t));
        Map<String, Object> svc = r.named("Service", FULLNAME);
        Map<String, Object> spec = map(svc, "spec");
        assertThat(spec.get("type")).isEqualTo("ClusterIP");
        assertThat(servicePorts(svc)).containsEntry("lock", List.of(7420, "lock"))
                .containsEntry("http", List.of(7421, "http"));
        assertThat(map(map(svc, "metadata"), "annotations"))
                .containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", "7421")
                .containsEntry("prometheus.io/path", "/actuator/prometheus");
        // The selector picks the StatefulSet's pods.
        Map<String, Object> podLabels = map(map(map(r.one("StatefulSet"), "spec"), "template"), "metadata");
        assertThat(map(podLabels, "labels")).containsAllEntriesOf(map(spec, "selector"));
        // Scraped once: the headless Service carries no scrape annotations.
        assertThat(map(r.named("Service", FULLNAME + "-headless"), "metadata")).doesNotContainKey("annotations");
    }

    @Test
    void configMapCarriesEveryLeaseholdSettingWithTheServerDefaults() throws IOException {
        Map<String, Object> app = applicationYml(Rendered.of(render(t -> t)).one("ConfigMap"));
        Map<String, Object> leasehold = map(app, "leasehold");

        // Every leasehold.* property the server knows is tunable from values.
        for (var component : LeaseholdProperties.class.getRecordComponents()) {
            assertThat(leasehold).as("leasehold.%s is not rendered from values", kebab(component.getName()))
                    .containsKey(kebab(component.getName()));
        }
        // The chart's defaults equal the server's own application.yml, except where the
        // container differs on purpose (data-dir).
        Map<String, Object> serverDefaults;
        try (InputStream in = Files.newInputStream(Path.of("src/main/resources/application.yml"))) {
            serverDefaults = map(yaml().load(in), "leasehold");
        }
        serverDefaults.forEach((key, value) -> {
            if (!key.equals("data-dir") && !key.equals("address")) {
                assertThat(leasehold.get(key)).as("default of leasehold.%s", key).isEqualTo(value);
            }
        });
        assertThat(leasehold).containsEntry("data-dir", "/data")
                .containsEntry("max-held-keys", 1000000).containsEntry("token-block-size", 1000000)
                .containsEntry("recovery-grace", "auto").containsEntry("drain-timeout", "10s");
        assertThat(map(app, "server")).containsEntry("port", 7421);
        // the server binds loopback unless told otherwise; a pod must be reachable at its address
        assertThat(leasehold).containsEntry("address", "0.0.0.0");
        assertThat(map(app, "server")).containsEntry("address", "0.0.0.0");
    }

    @Test
    void springBootBindsTheRenderedApplicationYml() throws IOException {
        // Load the ConfigMap's file the way Spring Boot loads /config/application.yml, then
        // bind leasehold.* onto the server's own properties record (which validates ranges).
        LeaseholdProperties defaults = bind(render(t -> t));
        assertThat(defaults.port()).isEqualTo(7420);
        assertThat(defaults.dataDir()).isEqualTo(Path.of("/data"));
        assertThat(defaults.maxHeldKeys()).isEqualTo(1_000_000);
        assertThat(defaults.tokenBlockSize()).isEqualTo(1_000_000L);
        assertThat(defaults.frameTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.recoveryGrace()).isEqualTo(RecoveryGrace.AUTO);
        assertThat(defaults.drainTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.maxWait()).isEqualTo(Duration.ofSeconds(255));
        assertThat(bind(render(t -> t.set("leasehold.maxWait", "3600s"))).maxWait()).isEqualTo(Duration.ofHours(1));
        assertThat(bind(render(t -> t.set("leasehold.maxWait", "300500ms"))).maxWait()).isEqualTo(Duration.ofMillis(300_500));
        assertThat(defaults.maxWatchesPerSession()).isEqualTo(1024);
        assertThat(defaults.maxWatchesTotal()).isEqualTo(100_000);
        LeaseholdProperties watches = bind(render(t -> t.set("leasehold.maxWatchesPerSession", 8)
                .set("leasehold.maxWatchesTotal", 50)));
        assertThat(watches.maxWatchesPerSession()).isEqualTo(8);
        assertThat(watches.maxWatchesTotal()).isEqualTo(50);
        assertThat(defaults.maxValueBytes()).isEqualTo(256);
        assertThat(bind(render(t -> t.set("leasehold.maxValueBytes", 0))).maxValueBytes()).isZero();
        assertThat(bind(render(t -> t.set("leasehold.maxValueBytes", 1024))).maxValueBytes()).isEqualTo(1024);

        LeaseholdProperties tuned = bind(render(t -> t.set("leasehold.maxKeyBytes", 300)
                .set("leasehold.frameTimeout", "1500ms").set("leasehold.ioThreads", 3)
                .set("leasehold.tokenBlockSize", 77).set("persistence.mountPath", "/srv/lh")));
        assertThat(tuned.maxKeyBytes()).isEqualTo(300);
        assertThat(tuned.frameTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(tuned.ioThreads()).isEqualTo(3);
        assertThat(tuned.tokenBlockSize()).isEqualTo(77L);
        assertThat(tuned.dataDir()).isEqualTo(Path.of("/srv/lh"));

        // recovery-grace renders as text ("auto", "255s", "0s") and binds onto RecoveryGrace.
        LeaseholdProperties full = bind(render(t -> t.set("leasehold.recoveryGrace", "255s")
                .set("leasehold.drainTimeout", "1500ms")));
        assertThat(full.recoveryGrace().fixed()).isEqualTo(Duration.ofSeconds(255));
        assertThat(full.drainTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(bind(render(t -> t.set("leasehold.recoveryGrace", "0s"))).recoveryGrace().isOff()).isTrue();
        assertThat(bind(render(t -> t.set("leasehold.recoveryGrace", "PT30S"))).recoveryGrace().fixed())
                .isEqualTo(Duration.ofSeconds(30));
    }

    static LeaseholdProperties bind(List<Map<String, Object>> docs) throws IOException {
        String text = (String) map(Rendered.of(docs).one("ConfigMap"), "data").get("application.yml");
        List<PropertySource<?>> sources = new YamlPropertySourceLoader()
                .load("configmap", new ByteArrayResource(text.getBytes(StandardCharsets.UTF_8)));
        Binder binder = new Binder(ConfigurationPropertySources.from(sources));
        assertThat(binder.bind("server.port", Integer.class).get()).isEqualTo(
                (Integer) ports(container(Rendered.of(docs).one("StatefulSet"))).get("http"));
        return binder.bind("leasehold", LeaseholdProperties.class).get();
    }

    @Test
    void raftPropertiesRenderInBracketsAndBindWhole(@TempDir Path dir) throws IOException {
        Path values = dir.resolve("values.yaml");
        Files.writeString(values, """
                leasehold:
                  cluster:
                    raftProperties:
                      "raft.server.log.force.sync.num": 16
                      "raft.grpc.flow.control.window": 4MB
                """);
        List<Map<String, Object>> docs = render(t -> t.withValuesFile(values));
        Map<String, Object> cluster = map(map(applicationYml(Rendered.of(docs).one("ConfigMap")), "leasehold"), "cluster");
        assertThat(map(cluster, "raft-properties")).containsEntry("[raft.server.log.force.sync.num]", "16")
                .containsEntry("[raft.grpc.flow.control.window]", "4MB");
        // The dots stay inside each key: Spring Boot does not read them as nested maps.
        assertThat(bind(docs).cluster().raftProperties()).containsOnly(Map.entry("raft.server.log.force.sync.num", "16"),
                Map.entry("raft.grpc.flow.control.window", "4MB"));
    }

    // ---------------------------------------------------------------- TLS and ACLs

    @Test
    void withoutTlsValuesTheProtocolPortIsPlaintextAndNoSecretIsMounted() {
        Rendered r = Rendered.of(render(t -> t));
        Map<String, Object> leasehold = map(applicationYml(r.one("ConfigMap")), "leasehold");
        assertThat(map(leasehold, "tls")).containsEntry("bundle", "").containsEntry("client-auth", "none");
        assertThat(map(leasehold, "acl")).isEmpty();
        assertThat(applicationYml(r.one("ConfigMap"))).doesNotContainKey("spring");
        Map<String, Object> sts = r.one("StatefulSet");
        assertThat(volumes(map(map(map(sts, "spec"), "template"), "spec"))).doesNotContainKey("tls");
        assertThat(mounts(container(sts))).doesNotContainKey("tls");
    }

    @Test
    void certManagerSecretIsMountedAsADirectoryAndBecomesTheSslBundleWithMtlsAndAcls(@TempDir Path dir)
            throws IOException {
        Path values = dir.resolve("values.yaml");
        Files.writeString(values, """
                tls:
                  secretName: leasehold-tls
                leasehold:
                  tls:
                    clientAuth: need
                  acl:
                    "subject:CN=orders,O=Example": ["orders/", "shared/"]
                    "uri:spiffe://cluster.local/ns/billing/sa/billing": ["billing/"]
                    "dns:worker.jobs.svc": [""]
                """);
        List<Map<String, Object>> docs = render(t -> t.withValuesFile(values));
        Rendered r = Rendered.of(docs);
        Map<String, Object> sts = r.one("StatefulSet");
        Map<String, Object> pod = map(map(map(sts, "spec"), "template"), "spec");
        Map<String, Object> secret = map(volumes(pod).get("tls"), "secret");
        assertThat(secret).containsEntry("secretName", "leasehold-tls").containsEntry("defaultMode", 0440);
        Map<String, Object> mount = list(container(sts), "volumeMounts").stream()
                .filter(m -> "tls".equals(m.get("name"))).findFirst().orElseThrow();
        assertThat(mount).containsEntry("mountPath", "/etc/leasehold/tls").containsEntry("readOnly", true)
                .doesNotContainKey("subPath"); // a subPath mount would never see a renewed certificate

        Map<String, Object> app = applicationYml(r.one("ConfigMap"));
        Map<String, Object> leasehold = map(app, "leasehold");
        assertThat(map(leasehold, "tls")).containsEntry("bundle", "leasehold").containsEntry("client-auth", "need");
        assertThat(map(leasehold, "acl"))
                .containsEntry("[subject:CN=orders,O=Example]", List.of("orders/", "shared/"))
                .containsEntry("[uri:spiffe://cluster.local/ns/billing/sa/billing]", List.of("billing/"));
        Map<String, Object> bundle = map(map(map(map(app, "spring"), "ssl"), "bundle"), "pem");
        bundle = map(bundle, "leasehold");
        assertThat(bundle).containsEntry("reload-on-update", true);
        assertThat(map(bundle, "keystore")).containsEntry("certificate", "file:/etc/leasehold/tls/tls.crt")
                .containsEntry("private-key", "file:/etc/leasehold/tls/tls.key");
        assertThat(map(bundle, "truststore")).containsEntry("certificate", "file:/etc/leasehold/tls/ca.crt");

        // Spring Boot reads the identities back whole, brackets removed, ':' '=' ',' kept.
        LeaseholdProperties bound = bind(docs);
        assertThat(bound.tls().bundle()).isEqualTo("leasehold");
        assertThat(bound.tls().clientAuth()).isEqualTo(LeaseholdProperties.ClientAuth.NEED);
        assertThat(bound.acl()).containsEntry("subject:CN=orders,O=Example", List.of("orders/", "shared/"))
                .containsEntry("uri:spiffe://cluster.local/ns/billing/sa/billing", List.of("billing/"))
                .containsEntry("dns:worker.jobs.svc", List.of(""));
    }

    @Test
    void serverOnlyTlsNeedsNoCaAndAnOwnBundleReplacesTheChartsBundle() throws IOException {
        Map<String, Object> app = applicationYml(Rendered.of(render(t -> t.set("tls.secretName", "s")
                .set("tls.mountPath", "/tls/").set("tls.reloadOnUpdate", false))).one("ConfigMap"));
        Map<String, Object> bundle = map(map(map(map(map(app, "spring"), "ssl"), "bundle"), "pem"), "leasehold");
        assertThat(bundle).containsEntry("reload-on-update", false).doesNotContainKey("truststore"); // ACME: no ca.crt
        assertThat(map(bundle, "keystore")).containsEntry("certificate", "file:/tls/tls.crt");
        assertThat(map(map(app, "leasehold"), "tls")).containsEntry("bundle", "leasehold")
                .containsEntry("client-auth", "none");

        Map<String, Object> own = applicationYml(Rendered.of(render(t -> t.set("leasehold.tls.bundle", "mine")
                .set("leasehold.tls.clientAuth", "want")
                .set("extraConfig.spring.ssl.bundle.jks.mine.keystore.location", "file:/x/k.p12"))).one("ConfigMap"));
        assertThat(map(map(own, "leasehold"), "tls")).containsEntry("bundle", "mine").containsEntry("client-auth", "want");
        assertThat(map(map(map(own, "spring"), "ssl"), "bundle")).containsOnlyKeys("jks");
    }

    @Test
    void inconsistentTlsValuesFailTheRender() {
        assertThatThrownBy(() -> render(t -> t.set("leasehold.tls.clientAuth", "need")))
                .hasMessageContaining("needs TLS: set tls.secretName");
        assertThatThrownBy(() -> render(t -> t.set("tls.secretName", "s")
                .set("leasehold.acl.dns:a[0]", "a/")))
                .hasMessageContaining("leasehold.acl needs client certificates");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.tls.clientAuth", "required")))
                .hasMessageContaining("clientAuth");
        assertThatThrownBy(() -> render(t -> t.set("tls.secretName", "s").set("leasehold.tls.clientAuth", "need")
                .set("leasehold.acl.orders[0]", "a/"))).hasMessageContaining("orders");
    }

    @Test
    void serviceMonitorOnlyWhenEnabled() {
        assertThat(Rendered.of(render(t -> t)).all("ServiceMonitor")).isEmpty();

        Rendered r = Rendered.of(render(t -> t.set("serviceMonitor.enabled", true)
                .set("serviceMonitor.labels.release", "kube-prometheus")
                .set("serviceMonitor.interval", "15s")));
        Map<String, Object> sm = r.one("ServiceMonitor");
        assertThat(sm.get("apiVersion")).isEqualTo("monitoring.coreos.com/v1");
        assertThat(map(map(sm, "metadata"), "labels")).containsEntry("release", "kube-prometheus");
        Map<String, Object> endpoint = list(map(sm, "spec"), "endpoints").get(0);
        assertThat(endpoint).containsEntry("port", "http").containsEntry("path", "/actuator/prometheus")
                .containsEntry("interval", "15s");
        assertThat(map(map(sm, "spec"), "selector").get("matchLabels"))
                .isEqualTo(map(map(r.named("Service", FULLNAME), "spec"), "selector"));
    }

    @Test
    void prometheusRuleOnlyWhenEnabledWithEveryAlertOfTheRulesFile() throws java.io.IOException {
        assertThat(Rendered.of(render(t -> t)).all("PrometheusRule")).isEmpty();

        Rendered r = Rendered.of(render(t -> t.set("prometheusRule.enabled", true)
                .set("prometheusRule.labels.release", "kube-prometheus")));
        Map<String, Object> rule = r.one("PrometheusRule");
        assertThat(rule.get("apiVersion")).isEqualTo("monitoring.coreos.com/v1");
        assertThat(map(map(rule, "metadata"), "labels")).containsEntry("release", "kube-prometheus");
        List<Map<String, Object>> rules = list(list(map(rule, "spec"), "groups").get(0), "rules");

        // The same alerts, expressions and annotations as the plain rules file (one source),
        // except that LeaseholdNodeDown selects this release's job.
        Map<String, Object> plain = new org.yaml.snakeyaml.Yaml().load(java.nio.file.Files.readString(
                CHART.resolve("files/prometheus-rules.yaml")));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> expected = list(((List<Map<String, Object>>) plain.get("groups")).get(0), "rules");
        assertThat(rules).extracting(a -> a.get("alert")).containsExactlyElementsOf(
                expected.stream().map(a -> a.get("alert")).toList());
        assertThat(rules).extracting(a -> a.get("alert")).contains("LeaseholdNoLeader", "LeaseholdLeaderFlapping",
                "LeaseholdBusyRising", "LeaseholdLeaseExpirationsRising", "LeaseholdQueueWaitHigh",
                "LeaseholdPeerConnectionsRefused", "LeaseholdStorageFailing", "LeaseholdNodeDown",
                "LeaseholdNodeNotReady", "LeaseholdCertificateExpiringSoon");
        Map<String, Object> nodeDown = rules.stream().filter(a -> a.get("alert").equals("LeaseholdNodeDown")).findFirst()
                .orElseThrow();
        assertThat(nodeDown.get("expr").toString().trim()).isEqualTo("up{job=\"" + FULLNAME + "\"} == 0");
        Map<String, Object> noLeader = rules.stream().filter(a -> a.get("alert").equals("LeaseholdNoLeader")).findFirst()
                .orElseThrow();
        assertThat(noLeader).isEqualTo(expected.stream().filter(a -> a.get("alert").equals("LeaseholdNoLeader"))
                .findFirst().orElseThrow());
        assertThat(map(noLeader, "annotations").get("summary").toString()).contains("{{ $labels.namespace }}");
    }

    @Test
    void grafanaDashboardConfigMapOnlyWhenEnabledWithTheSidecarLabel() throws java.io.IOException {
        Rendered off = Rendered.of(render(t -> t));
        assertThat(off.all("ConfigMap")).noneMatch(c -> map(c, "metadata").get("name").equals(FULLNAME + "-dashboard"));

        Rendered r = Rendered.of(render(t -> t.set("grafanaDashboard.enabled", true)
                .set("grafanaDashboard.annotations.grafana_folder", "Locks")));
        Map<String, Object> cm = r.named("ConfigMap", FULLNAME + "-dashboard");
        assertThat(map(map(cm, "metadata"), "labels")).containsEntry("grafana_dashboard", "1");
        assertThat(map(map(cm, "metadata"), "annotations")).containsEntry("grafana_folder", "Locks");
        String json = map(cm, "data").get("leasehold.json").toString();
        assertThat(json.strip()).isEqualTo(java.nio.file.Files.readString(CHART.resolve("files/grafana-dashboard.json")).strip());
        assertThat(json).contains("\"uid\": \"leasehold\"", "$namespace", "$pod");
    }

    @Test
    void podDisruptionBudget() {
        Map<String, Object> pdb = Rendered.of(render(t -> t)).one("PodDisruptionBudget");
        assertThat(map(pdb, "spec")).containsEntry("maxUnavailable", 1).doesNotContainKey("minAvailable");

        pdb = Rendered.of(render(t -> t.set("podDisruptionBudget.minAvailable", 1))).one("PodDisruptionBudget");
        assertThat(map(pdb, "spec")).containsEntry("minAvailable", 1).doesNotContainKey("maxUnavailable");

        assertThat(Rendered.of(render(t -> t.set("podDisruptionBudget.enabled", false)))
                .all("PodDisruptionBudget")).isEmpty();
    }

    // ---------------------------------------------------------------- overrides

    @Test
    void overriddenValuesReachConfigPortsAndClaim() {
        Rendered r = Rendered.of(render(t -> t
                .set("leasehold.port", 7500)
                .set("leasehold.maxKeyBytes", 256)
                .set("leasehold.maxWaitersPerKey", 16)
                .set("leasehold.maxWaitersTotal", 5000)
                .set("leasehold.maxPendingPerSession", 8)
                .set("leasehold.maxHeldKeys", 2000000)
                .set("leasehold.maxConnections", 300)
                .set("leasehold.frameTimeout", "3s")
                .set("leasehold.tokenBlockSize", 5000)
                .set("leasehold.ioThreads", 2)
                .set("leasehold.recoveryGrace", "255s")
                .set("leasehold.drainTimeout", "45s")
                .set("management.port", 8081)
                .set("service.port", 17420)
                .set("persistence.size", "5Gi")
                .set("persistence.storageClass", "fast-ssd")
                .set("persistence.mountPath", "/var/lib/leasehold")
                .set("extraConfig.logging.level.dev\\.leasehold", "DEBUG")
                .set("extraConfig.leasehold.port", 1) // the chart owns this key: ignored
                .set("image.tag", "1.2.3")));

        Map<String, Object> app = applicationYml(r.one("ConfigMap"));
        assertThat(map(app, "leasehold"))
                .containsEntry("port", 7500).containsEntry("max-key-bytes", 256)
                .containsEntry("max-waiters-per-key", 16).containsEntry("max-waiters-total", 5000)
                .containsEntry("max-pending-per-session", 8).containsEntry("max-held-keys", 2000000)
                .containsEntry("max-connections", 300).containsEntry("frame-timeout", "3s")
                .containsEntry("token-block-size", 5000).containsEntry("io-threads", 2)
                .containsEntry("recovery-grace", "255s").containsEntry("drain-timeout", "45s")
                .containsEntry("data-dir", "/var/lib/leasehold");
        assertThat(map(app, "server")).containsEntry("port", 8081);
        assertThat(map(map(app, "logging"), "level")).containsEntry("dev.leasehold", "DEBUG");

        Map<String, Object> sts = r.one("StatefulSet");
        Map<String, Object> c = container(sts);
        assertThat(c.get("image")).isEqualTo("leasehold:1.2.3");
        assertThat(ports(c)).containsEntry("lock", 7500).containsEntry("http", 8081);
        assertThat(mounts(c)).containsEntry("data", "/var/lib/leasehold");
        assertThat(env(c)).containsEntry("LEASEHOLD_DATA_DIR", "/var/lib/leasehold");
        assertThat(map(map(map(sts, "spec"), "template"), "spec").get("terminationGracePeriodSeconds")).isEqualTo(65);
        Map<String, Object> claimSpec = map(list(map(sts, "spec"), "volumeClaimTemplates").get(0), "spec");
        assertThat(claimSpec.get("storageClassName")).isEqualTo("fast-ssd");
        assertThat(map(map(claimSpec, "resources"), "requests").get("storage")).isEqualTo("5Gi");

        Map<String, Object> svc = r.named("Service", FULLNAME);
        assertThat(servicePorts(svc)).containsEntry("lock", List.of(17420, "lock"))
                .containsEntry("http", List.of(7421, "http"));
        assertThat(map(map(svc, "metadata"), "annotations")).containsEntry("prometheus.io/port", "8081");
        assertThat(servicePorts(r.named("Service", FULLNAME + "-headless")))
                .containsEntry("lock", List.of(7500, "lock")).containsEntry("http", List.of(8081, "http"));
    }

    @Test
    void valuesFileOverridesAndFreeFormConfig(@TempDir Path dir) throws IOException {
        Path values = dir.resolve("values.yaml");
        Files.writeString(values, """
                leasehold:
                  maxHeldKeys: 123456789012
                  recoveryGrace: 0s
                  drainTimeout: 500ms
                extraConfig:
                  spring:
                    lifecycle:
                      timeout-per-shutdown-phase: 40s
                  server:
                    port: 9999          # owned by the chart (management.port): ignored
                    netty:
                      max-initial-line-length: 2000000
                  management:
                    endpoint:
                      health:
                        show-details: never
                """);
        Rendered r = Rendered.of(render(t -> t.withValuesFile(values)));
        Map<String, Object> app = applicationYml(r.one("ConfigMap"));
        assertThat(map(app, "leasehold")).containsEntry("max-held-keys", 123456789012L)
                .containsEntry("recovery-grace", "0s").containsEntry("drain-timeout", "500ms");
        assertThat(map(app, "server")).containsEntry("port", 7421);
        assertThat(map(map(app, "server"), "netty")).containsEntry("max-initial-line-length", 2000000);
        assertThat(map(map(app, "spring"), "lifecycle")).containsEntry("timeout-per-shutdown-phase", "40s");
        assertThat(map(map(map(app, "management"), "endpoint"), "health")).containsEntry("show-details", "never");
        assertThat(grace(r.docs())).isEqualTo(21);
    }

    @Test
    void configChecksumFollowsTheConfigMapOnly() {
        String base = checksum(render(t -> t));
        assertThat(base).matches("[0-9a-f]{64}");
        assertThat(checksum(render(t -> t))).as("stable").isEqualTo(base);
        assertThat(checksum(render(t -> t.set("leasehold.maxWaitersPerKey", 10)))).isNotEqualTo(base);
        assertThat(checksum(render(t -> t.set("extraConfig.logging.level.root", "WARN")))).isNotEqualTo(base);
        // Not part of application.yml: no config roll for it.
        assertThat(checksum(render(t -> t.set("resources.limits.memory", "1Gi")))).isEqualTo(base);
    }

    @Test
    void terminationGracePeriodStaysAboveTheDrainTimeout() {
        assertThat(grace(render(t -> t))).isEqualTo(30).isGreaterThan(10);
        assertThat(grace(render(t -> t.set("leasehold.drainTimeout", "2m")))).isEqualTo(140);
        assertThat(grace(render(t -> t.set("leasehold.drainTimeout", "1500ms")))).isEqualTo(22);
        assertThat(grace(render(t -> t.set("leasehold.drainTimeout", "30s")
                .set("terminationGraceMarginSeconds", 5)))).isEqualTo(35);
        assertThat(grace(render(t -> t.set("terminationGracePeriodSeconds", 11)))).isEqualTo(11);
        assertThatThrownBy(() -> render(t -> t.set("terminationGracePeriodSeconds", 10)))
                .hasMessageContaining("must be greater than leasehold.drainTimeout");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.drainTimeout", "2m")
                .set("terminationGracePeriodSeconds", 60)))
                .hasMessageContaining("must be greater than leasehold.drainTimeout");
    }

    @Test
    void schemaRejectsUnsafeOrMistypedValues() {
        assertThatThrownBy(() -> render(t -> t.set("replicaCount", 2))).hasMessageContaining("replicaCount");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.maxKeybytes", 10))).hasMessageContaining("maxKeybytes");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.drainTimeout", "10 seconds")))
                .hasMessageContaining("drainTimeout");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.recoveryGrace", "sometimes")))
                .hasMessageContaining("recoveryGrace");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.maxWait", "one hour"))).hasMessageContaining("maxWait");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.maxValueBytes", 1025))).hasMessageContaining("maxValueBytes");
        assertThatThrownBy(() -> render(t -> t.set("leasehold.maxKeyBytes", 0))).hasMessageContaining("maxKeyBytes");
        assertThat(Rendered.of(render(t -> t.set("replicaCount", 0))).one("StatefulSet"))
                .extracting(s -> map(s, "spec").get("replicas")).isEqualTo(0);
    }

    @Test
    void clusterModeRendersThreeParallelPodsThatFindEachOtherByDnsName() throws IOException {
        Rendered r = Rendered.of(render(t -> t.set("cluster.enabled", true)));
        Map<String, Object> spec = map(r.one("StatefulSet"), "spec");
        assertThat(spec.get("replicas")).isEqualTo(3);
        assertThat(spec.get("podManagementPolicy")).as("readiness needs a quorum: OrderedReady would deadlock")
                .isEqualTo("Parallel");
        Map<String, Object> headless = map(r.named("Service", FULLNAME + "-headless"), "spec");
        assertThat(headless.get("publishNotReadyAddresses")).isEqualTo(true);
        assertThat(list(headless, "ports")).extracting(p -> p.get("name")).contains("raft");

        Map<String, Object> pod = map(map(spec, "template"), "spec");
        Map<String, Object> container = list(pod, "containers").get(0);
        assertThat(list(container, "ports")).extracting(p -> p.get("name") + ":" + p.get("containerPort"))
                .contains("raft:7430");
        assertThat(list(container, "env")).anySatisfy(e -> {
            assertThat(e.get("name")).isEqualTo("LEASEHOLD_CLUSTER_NODEID");
            assertThat(map(map(e, "valueFrom"), "fieldRef").get("fieldPath")).isEqualTo("metadata.name");
        });
        assertThat(map(pod, "affinity")).containsKey("podAntiAffinity");
        assertThat(map(r.one("PodDisruptionBudget"), "spec").get("maxUnavailable")).isEqualTo(1);

        Map<String, Object> cluster = map(map(applicationYml(r.one("ConfigMap")), "leasehold"), "cluster");
        Map<String, Object> peers = map(cluster, "peers");
        assertThat(peers).containsOnlyKeys(FULLNAME + "-0", FULLNAME + "-1", FULLNAME + "-2");
        assertThat(map(peers, FULLNAME + "-1")).containsEntry("raft-address",
                FULLNAME + "-1." + FULLNAME + "-headless.default.svc.cluster.local:7430")
                .containsEntry("client-address", FULLNAME + "-1." + FULLNAME + "-headless.default.svc.cluster.local:7420");
        assertThat(cluster).containsEntry("election-timeout-max", "1500ms");
    }

    @Test
    void clusterGracePeriodCoversTheLeadershipTransferAndTheDrain() {
        // 10s drain + 2 x 1500ms transfer (3s) + 20s margin.
        assertThat(grace(render(t -> t.set("cluster.enabled", true)))).isEqualTo(33);
        assertThat(grace(render(t -> t.set("cluster.enabled", true)
                .set("leasehold.cluster.electionTimeoutMax", "4s")))).isEqualTo(38);
        assertThat(container(Rendered.of(render(t -> t.set("cluster.enabled", true))).one("StatefulSet")))
                .doesNotContainKey("lifecycle"); // no preStop: SIGTERM drains (statefulset.yaml says why)
        assertThatThrownBy(() -> render(t -> t.set("cluster.enabled", true).set("terminationGracePeriodSeconds", 12)))
                .hasMessageContaining("terminationGracePeriodSeconds");
    }

    @Test
    void clusterTlsSecretIsMountedAsADirectoryAndBecomesThePeerBundle() throws IOException {
        List<Map<String, Object>> docs = render(t -> t.set("cluster.enabled", true)
                .set("cluster.tls.secretName", "leasehold-peer-tls"));
        Rendered r = Rendered.of(docs);
        Map<String, Object> sts = r.one("StatefulSet");
        Map<String, Object> pod = map(map(map(sts, "spec"), "template"), "spec");
        assertThat(map(volumes(pod).get("peer-tls"), "secret")).containsEntry("secretName", "leasehold-peer-tls")
                .containsEntry("defaultMode", 0440);
        Map<String, Object> mount = list(container(sts), "volumeMounts").stream()
                .filter(m -> "peer-tls".equals(m.get("name"))).findFirst().orElseThrow();
        assertThat(mount).containsEntry("mountPath", "/etc/leasehold/peer-tls").containsEntry("readOnly", true)
                .doesNotContainKey("subPath"); // a renewed certificate must reach the pod
        assertThat(volumes(pod)).doesNotContainKey("tls"); // the protocol port stays as configured

        Map<String, Object> app = applicationYml(r.one("ConfigMap"));
        assertThat(map(map(map(app, "leasehold"), "cluster"), "tls")).containsEntry("bundle", "leasehold-peer");
        Map<String, Object> bundle = map(map(map(map(map(app, "spring"), "ssl"), "bundle"), "pem"), "leasehold-peer");
        assertThat(bundle).containsEntry("reload-on-update", true);
        assertThat(map(bundle, "keystore")).containsEntry("certificate", "file:/etc/leasehold/peer-tls/tls.crt")
                .containsEntry("private-key", "file:/etc/leasehold/peer-tls/tls.key");
        assertThat(map(bundle, "truststore")).containsEntry("certificate", "file:/etc/leasehold/peer-tls/ca.crt");

        // Both Secrets at once: two bundles side by side.
        Map<String, Object> both = applicationYml(Rendered.of(render(t -> t.set("cluster.enabled", true)
                .set("cluster.tls.secretName", "p").set("tls.secretName", "c"))).one("ConfigMap"));
        assertThat(map(map(map(map(both, "spring"), "ssl"), "bundle"), "pem")).containsOnlyKeys("leasehold",
                "leasehold-peer");
    }

    @Test
    void clusterTlsWithoutClusterModeFailsTheRender() {
        assertThatThrownBy(() -> render(t -> t.set("cluster.tls.secretName", "p")))
                .hasMessageContaining("cluster.tls.secretName needs cluster.enabled");
        assertThat(map(map(map(applicationYml(Rendered.of(render(t -> t)).one("ConfigMap")), "leasehold"), "cluster"),
                "tls")).containsEntry("bundle", "");
    }

    @Test
    void clusterModeRefusesAnEvenNumberOfNodes() {
        // The schema allows 3 or 5 only.
        assertThatThrownBy(() -> render(t -> t.set("cluster.enabled", true).set("cluster.replicas", 4)))
                .hasMessageContaining("replicas");
        assertThatThrownBy(() -> render(t -> t.set("cluster.enabled", true).set("cluster.replicas", 7)))
                .hasMessageContaining("replicas");
        assertThatThrownBy(() -> render(t -> t.set("cluster.enabled", true).set("cluster.replicas", 3)
                .set("cluster.founders", 5))).hasMessageContaining("cluster.founders=5 is more than");
        assertThatThrownBy(() -> render(t -> t.set("cluster.enabled", true).set("cluster.replicas", 1)))
                .hasMessageContaining("replicas");
    }

    @Test
    void persistenceCanBeTurnedOffForThrowAwayInstalls() {
        Map<String, Object> sts = Rendered.of(render(t -> t.set("persistence.enabled", false))).one("StatefulSet");
        assertThat(map(sts, "spec")).doesNotContainKey("volumeClaimTemplates");
        Map<String, Object> pod = map(map(map(sts, "spec"), "template"), "spec");
        assertThat(volumes(pod).get("data")).containsKey("emptyDir");
        assertThat(mounts(container(sts))).containsEntry("data", "/data");
    }

    @Test
    void optionalServiceAccount() {
        assertThat(Rendered.of(render(t -> t)).all("ServiceAccount")).isEmpty();
        Rendered r = Rendered.of(render(t -> t.set("serviceAccount.create", true)));
        assertThat(name(r.one("ServiceAccount"))).isEqualTo(FULLNAME);
        assertThat(map(map(map(r.one("StatefulSet"), "spec"), "template"), "spec").get("serviceAccountName"))
                .isEqualTo(FULLNAME);
    }

    @Test
    void notesExplainHowToConnectAndScrape() {
        Release release = new Helm(CHART).install().withName(RELEASE).withNamespace("locks")
                .dryRun().clientOnly().call();
        assertThat(release.getOutput())
                .contains("lh-leasehold.locks.svc.cluster.local:7420")
                .contains("kubectl -n locks port-forward svc/lh-leasehold 7420:7420 7421:7421")
                .contains("/actuator/prometheus")
                .contains("prometheus.io/scrape")
                .doesNotContain("WARNING");
        assertThat(new Helm(CHART).install().withName(RELEASE).set("persistence.enabled", false)
                .dryRun().clientOnly().call().getOutput())
                .contains("WARNING: persistence.enabled=false");
    }

    @Test
    void notesPromiseNoHealthDetailsTheServerHidesAndFollowTheClusterModeAndDomain() {
        String single = new Helm(CHART).install().withName(RELEASE).withNamespace("locks")
                .dryRun().clientOnly().call().getOutput();
        assertThat(single).doesNotContain("shows the time left and why")
                .contains("leasehold_recovery_grace_remaining_seconds")
                .contains("show-details=never")
                .doesNotContain("cluster: StatefulSet");
        String cluster = new Helm(CHART).install().withName(RELEASE).withNamespace("locks")
                .set("cluster.enabled", true).set("cluster.clusterDomain", "corp.example")
                .dryRun().clientOnly().call().getOutput();
        assertThat(cluster)
                .contains("installed as a 3-node cluster")
                .contains("A majority (2 of 3) must be up")
                .contains("lh-leasehold.locks.svc.corp.example:7420")
                .contains("lh-leasehold-0.lh-leasehold-headless.locks.svc.corp.example:7420,"
                        + "lh-leasehold-1.lh-leasehold-headless.locks.svc.corp.example:7420,"
                        + "lh-leasehold-2.lh-leasehold-headless.locks.svc.corp.example:7420")
                .contains("bin/leasehold cluster members")
                .doesNotContain("cluster.local");
    }

    // ---------------------------------------------------------------- helpers

    static List<Map<String, Object>> render(UnaryOperator<TemplateCommand> options) {
        String out = options.apply(new Helm(CHART).template().withName(RELEASE).withNamespace("default")).call();
        List<Map<String, Object>> docs = new ArrayList<>();
        for (Object doc : yaml().loadAll(out)) {
            if (doc != null) {
                docs.add(cast(doc));
            }
        }
        return docs;
    }

    static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    record Rendered(List<Map<String, Object>> docs) {
        static Rendered of(List<Map<String, Object>> docs) {
            return new Rendered(docs);
        }

        List<Map<String, Object>> all(String kind) {
            return docs.stream().filter(d -> kind.equals(d.get("kind"))).toList();
        }

        Map<String, Object> one(String kind) {
            List<Map<String, Object>> found = all(kind);
            assertThat(found).as("%s objects", kind).hasSize(1);
            return found.get(0);
        }

        Map<String, Object> named(String kind, String name) {
            return all(kind).stream().filter(d -> name.equals(name(d))).findFirst()
                    .orElseThrow(() -> new AssertionError("no " + kind + " named " + name));
        }
    }

    static Map<String, Object> applicationYml(Map<String, Object> configMap) {
        Object text = map(configMap, "data").get("application.yml");
        assertThat(text).isInstanceOf(String.class);
        return cast(yaml().load((String) text));
    }

    static String checksum(List<Map<String, Object>> docs) {
        Map<String, Object> sts = Rendered.of(docs).one("StatefulSet");
        return (String) map(map(map(map(sts, "spec"), "template"), "metadata"), "annotations").get("checksum/config");
    }

    static int grace(List<Map<String, Object>> docs) {
        Map<String, Object> sts = Rendered.of(docs).one("StatefulSet");
        return (Integer) map(map(map(sts, "spec"), "template"), "spec").get("terminationGracePeriodSeconds");
    }

    static void assertProbe(Map<String, Object> container, String probe, String path) {
        Map<String, Object> get = map(map(container, probe), "httpGet");
        assertThat(get).as(probe).containsEntry("path", path).containsEntry("port", "http");
    }

    static Map<String, Object> container(Map<String, Object> sts) {
        List<Map<String, Object>> containers = list(map(map(map(sts, "spec"), "template"), "spec"), "containers");
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    static Map<String, Object> ports(Map<String, Object> container) {
        Map<String, Object> byName = new LinkedHashMap<>();
        list(container, "ports").forEach(p -> byName.put((String) p.get("name"), p.get("containerPort")));
        return byName;
    }

    static Map<String, Object> servicePorts(Map<String, Object> svc) {
        Map<String, Object> byName = new LinkedHashMap<>();
        list(map(svc, "spec"), "ports").forEach(p -> byName.put((String) p.get("name"),
                List.of(p.get("port"), p.get("targetPort"))));
        return byName;
    }

    static Map<String, Object> mounts(Map<String, Object> container) {
        Map<String, Object> byName = new LinkedHashMap<>();
        list(container, "volumeMounts").forEach(m -> byName.put((String) m.get("name"), m.get("mountPath")));
        return byName;
    }

    static Map<String, Map<String, Object>> volumes(Map<String, Object> podSpec) {
        Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
        list(podSpec, "volumes").forEach(v -> byName.put((String) v.get("name"), v));
        return byName;
    }

    static Map<String, Object> env(Map<String, Object> container) {
        Map<String, Object> byName = new LinkedHashMap<>();
        list(container, "env").forEach(e -> byName.put((String) e.get("name"), e.get("value")));
        return byName;
    }

    static String name(Map<String, Object> doc) {
        return (String) map(doc, "metadata").get("name");
    }

    static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }

    static Map<String, Object> map(Object parent, String key) {
        Object value = ((Map<?, ?>) parent).get(key);
        assertThat(value).as("'%s' in %s", key, parent).isInstanceOf(Map.class);
        return cast(value);
    }

    static List<Map<String, Object>> list(Object parent, String key) {
        Object value = ((Map<?, ?>) parent).get(key);
        assertThat(value).as("'%s' in %s", key, parent).isInstanceOf(List.class);
        return cast(value);
    }

    static List<String> strings(Object parent, String key) {
        Object value = ((Map<?, ?>) parent).get(key);
        assertThat(value).as("'%s' in %s", key, parent).isInstanceOf(List.class);
        return cast(value);
    }

    @SuppressWarnings("unchecked")
    static <T> T cast(Object o) {
        return (T) o;
    }
}
