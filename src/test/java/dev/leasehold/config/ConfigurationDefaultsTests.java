package dev.leasehold.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.yaml.snakeyaml.Yaml;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.protocol.Wire;
import dev.leasehold.registry.RegistryLimits;
import dev.leasehold.server.LeaseholdServer;
import dev.leasehold.store.LeaseHorizonStore;
import dev.leasehold.store.ReservedTokens;

/**
 * The default of every {@code leasehold.*} setting is written once, as {@code @DefaultValue} on
 * {@link LeaseholdProperties} (what the binder uses when nothing else is given). The three places
 * that restate them for people (application.yml, the table of docs/configuration.md, the Helm
 * chart's values.yaml) must say the same, and each row of the README's short table of the
 * settings people change most must agree; this test names the first one that does not.
 */
class ConfigurationDefaultsTests {

    /**
     * Settings whose "default" is a deployment choice, not the server's: the chart mounts /data,
     * and a pod binds its address (the server's own default is loopback).
     */
    private static final Map<String, String> CHART_DIFFERS_ON_PURPOSE = Map.of("data-dir", "/data", "address", "0.0.0.0");

    /**
     * Cluster-mode settings without a default that application.yml and values.yaml leave out on
     * purpose: the cluster beans are conditional on {@code node-id} being present at all (an
     * empty value would turn cluster mode on), and the chart derives both from the pod names in
     * cluster mode. docs/configuration.md still lists them.
     */
    private static final Set<String> ONLY_GIVEN_FOR_A_CLUSTER = Set.of("cluster.node-id", "cluster.peers");

    /** No default: the setting is off or empty unless given. */
    private static final String NONE = "(none)";

    /**
     * Per-pod settings values.yaml leaves out: the chart's start-up shell sets {@code join} for
     * pods past {@code cluster.founders}, and a pod's Raft port binds every interface of the pod.
     */
    private static final Set<String> CHART_SETS_PER_POD = Set.of("cluster.join", "cluster.raft-bind-address");

    @Test
    void applicationYmlSaysWhatTheBinderDefaultsTo() throws IOException {
        Map<String, String> yml = flatten("", section(load(Path.of("src/main/resources/application.yml"))), false);
        Map<String, String> expected = new LinkedHashMap<>(defaults());
        ONLY_GIVEN_FOR_A_CLUSTER.forEach(expected::remove);
        assertThat(yml).as("application.yml leasehold.*").isEqualTo(expected);
    }

    @Test
    void theConfigurationPageSaysWhatTheBinderDefaultsTo() throws IOException {
        assertThat(table(Path.of("docs/configuration.md"))).as("docs/configuration.md table").isEqualTo(defaults());
    }

    @Test
    void theReadmeSettingsSayWhatTheBinderDefaultsTo() throws IOException {
        Map<String, String> readme = table(Path.of("README.md"));
        assertThat(readme).as("README settings table").isNotEmpty();
        assertThat(defaults()).as("README settings table").containsAllEntriesOf(readme);
    }

    /**
     * The settings' own factories ({@code defaults()}), which the embedded test server and the test
     * fixtures build nodes from, make what the binder makes of an empty configuration.
     */
    @Test
    void theCodeDefaultsAreWhatTheBinderBindsFromNothing() {
        LeaseholdProperties props = RecoveryGraceTests.bind(Map.of());
        assertThat(new RegistryLimits(props.maxWaitersPerKey(), props.maxWaitersTotal(), props.maxPendingPerSession(),
                props.maxHeldKeys(), props.lockDelay().toNanos(), props.maxSharedHoldersPerKey(), props.maxSharedTotal()))
                .isEqualTo(RegistryLimits.defaults());
        assertThat(new LeaseholdServer.Settings(props.address(), props.port(), props.maxKeyBytes(), props.frameTimeout(),
                props.maxConnections(), props.effectiveIoThreads(), props.drainTimeout(), props.listenBacklog(),
                props.maxWait(), props.maxValueBytes(), props.maxWatchesPerSession(), props.maxWatchesTotal()))
                .isEqualTo(LeaseholdServer.Settings.defaults(props.address(), props.port()));
        assertThat(props.port()).isEqualTo(Wire.DEFAULT_PORT);
        LeaseholdProperties.Cluster c = props.cluster();
        assertThat(new ClusterSettings("n1", Map.of(), Path.of("raft"), c.electionTimeoutMin(), c.electionTimeoutMax(),
                c.maxBatch(), c.maxInFlight(), c.maxPending(), c.snapshotEvery(), c.initialToken()))
                .isEqualTo(ClusterSettings.defaults("n1", Map.of(), Path.of("raft")));
        assertThat(props.recoveryLookahead()).isEqualTo(LeaseHorizonStore.Settings.DEFAULTS.lookahead());
        assertThat(props.recoveryClockSlack()).isEqualTo(LeaseHorizonStore.Settings.DEFAULTS.slack());
        assertThat(props.tokenBlockSize()).isEqualTo(ReservedTokens.DEFAULT_BLOCK_SIZE);
    }

    /** The {@code | `leasehold.x` | `default` |} rows of a Markdown table: setting → default or {@link #NONE}. */
    private static Map<String, String> table(Path markdown) throws IOException {
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^\\| `leasehold\\.([a-z.-]+)` \\| (`([^`]*)`|\\(none\\)) \\|")
                .matcher(Files.readString(markdown));
        while (m.find()) {
            rows.put(m.group(1), m.group(3) != null ? m.group(3) : NONE);
        }
        return rows;
    }

    @Test
    void theHelmValuesSayWhatTheBinderDefaultsTo() throws IOException {
        Map<String, String> values = new LinkedHashMap<>(
                flatten("", section(load(Path.of("helm/leasehold/values.yaml"))), true));
        CHART_DIFFERS_ON_PURPOSE.forEach((key, value) -> {
            if (values.containsKey(key)) {
                assertThat(values.remove(key)).as("values.yaml leasehold.%s", key).isEqualTo(value);
            }
        });
        Map<String, String> expected = new LinkedHashMap<>(defaults());
        CHART_DIFFERS_ON_PURPOSE.keySet().forEach(expected::remove);
        ONLY_GIVEN_FOR_A_CLUSTER.forEach(expected::remove);
        CHART_SETS_PER_POD.forEach(expected::remove);
        assertThat(values).as("helm/leasehold/values.yaml leasehold.*").isEqualTo(expected);
    }

    /** kebab-case setting (below {@code leasehold.}) → its default as written, or {@link #NONE}. */
    static Map<String, String> defaults() {
        Map<String, String> out = new LinkedHashMap<>();
        collect("", LeaseholdProperties.class, out);
        return out;
    }

    private static void collect(String prefix, Class<?> type, Map<String, String> out) {
        RecordComponent[] components = type.getRecordComponents();
        Constructor<?> canonical;
        try {
            canonical = type.getDeclaredConstructor(
                    Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
        Parameter[] params = canonical.getParameters();
        for (int i = 0; i < components.length; i++) {
            String name = prefix + kebab(components[i].getName());
            DefaultValue d = params[i].getAnnotation(DefaultValue.class);
            boolean hasValue = d != null && d.value().length > 0;
            if (components[i].getType().isRecord() && !hasValue) { // a nested group (tls), not a value type
                collect(name + ".", components[i].getType(), out);
            } else {
                out.put(name, hasValue ? String.join(",", d.value()) : NONE);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> flatten(String prefix, Map<String, Object> map, boolean camel) {
        Map<String, String> out = new LinkedHashMap<>();
        map.forEach((k, v) -> {
            String name = prefix + (camel ? kebab(k) : k);
            if (v instanceof Map<?, ?> nested && !nested.isEmpty() && !name.equals("acl")) {
                out.putAll(flatten(name + ".", (Map<String, Object>) nested, camel));
            } else {
                boolean empty = v == null || "".equals(v) || v instanceof Map<?, ?> e && e.isEmpty();
                out.put(name, empty ? NONE : String.valueOf(v));
            }
        });
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> section(Map<String, Object> doc) {
        return (Map<String, Object>) doc.get("leasehold");
    }

    private static Map<String, Object> load(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new Yaml().load(in);
        }
    }

    static String kebab(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }
}
