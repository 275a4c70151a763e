package dev.leasehold.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import dev.leasehold.config.LeaseholdProperties;

/**
 * Static checks of the {@code Dockerfile} (no Docker engine on the build machine): a small
 * parser turns it into instructions per stage, and the tests assert the essentials and that
 * they agree with the chart (UID, ports, data directory).
 */
class DockerfileTests {

    record Instruction(int line, String keyword, String args) {
    }

    record Stage(String from, String alias, List<Instruction> instructions) {
        List<Instruction> all(String keyword) {
            return instructions.stream().filter(i -> i.keyword().equals(keyword)).toList();
        }

        Instruction last(String keyword) {
            List<Instruction> found = all(keyword);
            assertThat(found).as("%s in stage %s", keyword, from).isNotEmpty();
            return found.get(found.size() - 1);
        }
    }

    static List<Stage> stages;
    static Map<String, Object> chartValues;

    @BeforeAll
    static void parse() throws IOException {
        stages = parse(Files.readAllLines(Path.of("Dockerfile")));
        try (InputStream in = Files.newInputStream(Path.of("helm/leasehold/values.yaml"))) {
            chartValues = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
        }
    }

    @Test
    void multiStageBuildWithTheWrapperOnAJdkThenAJre() {
        assertThat(stages).hasSizeGreaterThanOrEqualTo(2);
        Stage build = stages.get(0);
        Stage runtime = stages.get(stages.size() - 1);
        assertThat(build.from()).isEqualTo("eclipse-temurin:17-jdk");
        assertThat(build.alias()).isEqualTo("build");
        assertThat(build.all("RUN")).anyMatch(i -> i.args().contains("./mvnw") && i.args().contains("package"));
        assertThat(runtime.from()).isEqualTo("eclipse-temurin:17-jre");
        assertThat(runtime.all("COPY")).anyMatch(i -> i.args().startsWith("--from=build")
                && i.args().contains("leasehold.jar"));
        // Every base image has an explicit tag.
        assertThat(stages).allSatisfy(s -> assertThat(s.from()).contains(":").doesNotEndWith(":latest"));
    }

    @Test
    void runsAsTheFixedNonRootUidTheChartExpects() {
        Stage runtime = stages.get(stages.size() - 1);
        String user = runtime.last("USER").args();
        String uid = user.split(":")[0];
        assertThat(uid).as("numeric UID, so Kubernetes can verify runAsNonRoot").matches("[0-9]+");
        assertThat(Integer.parseInt(uid)).isNotZero();
        assertThat(uid).isEqualTo(String.valueOf(((Map<?, ?>) chartValues.get("securityContext")).get("runAsUser")));
        assertThat(uid).isEqualTo(String.valueOf(((Map<?, ?>) chartValues.get("podSecurityContext")).get("fsGroup")));
        // Nothing after USER runs as root again.
        List<Instruction> after = runtime.instructions().subList(runtime.instructions().indexOf(runtime.last("USER")),
                runtime.instructions().size());
        assertThat(after).noneMatch(i -> i.keyword().equals("RUN"));
        // The user is created with that UID and owns /data.
        assertThat(runtime.all("RUN")).anyMatch(i -> i.args().contains("useradd") && i.args().contains("--uid"));
        assertThat(runtime.all("ARG")).anyMatch(i -> i.args().equals("UID=" + uid));
    }

    @Test
    void exposesProtocolAndManagementPorts() {
        Stage runtime = stages.get(stages.size() - 1);
        List<String> exposed = runtime.all("EXPOSE").stream()
                .flatMap(i -> Arrays.stream(i.args().split("\\s+"))).map(p -> p.replace("/tcp", "")).toList();
        Map<?, ?> leasehold = (Map<?, ?>) chartValues.get("leasehold");
        Map<?, ?> management = (Map<?, ?>) chartValues.get("management");
        assertThat(exposed).containsExactlyInAnyOrder("7420", "7421")
                .contains(String.valueOf(leasehold.get("port")), String.valueOf(management.get("port")));
    }

    @Test
    void dataDirectoryIsAVolumeAndTheConfiguredDataDir() {
        Stage runtime = stages.get(stages.size() - 1);
        assertThat(runtime.all("VOLUME")).anyMatch(i -> i.args().equals("[\"/data\"]") || i.args().equals("/data"));
        assertThat(env(runtime)).containsEntry("LEASEHOLD_DATA_DIR", "/data");
        // the server binds loopback by default; a container's ports must be reachable from outside it
        assertThat(env(runtime)).containsEntry("LEASEHOLD_ADDRESS", "0.0.0.0").containsEntry("SERVER_ADDRESS", "0.0.0.0");
        assertThat(((Map<?, ?>) chartValues.get("persistence")).get("mountPath")).isEqualTo("/data");
    }

    @Test
    void imageEnvironmentBindsToTheDataDirSetting() {
        // The image's ENV (and the chart's env) must reach leasehold.data-dir through Spring's
        // environment-variable mapping, as other LEASEHOLD_* variables in docs/deploy.md do.
        Map<String, Object> environment = new java.util.HashMap<>(env(stages.get(stages.size() - 1)));
        environment.put("LEASEHOLD_MAX_WAITERS_PER_KEY", "64");
        Binder binder = new Binder(ConfigurationPropertySources.from(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, environment)));
        LeaseholdProperties properties = binder.bind("leasehold", LeaseholdProperties.class).get();
        assertThat(properties.dataDir()).isEqualTo(Path.of("/data"));
        assertThat(properties.maxWaitersPerKey()).isEqualTo(64);
    }

    @Test
    void containerAwareJvmOptions() {
        String options = env(stages.get(stages.size() - 1)).get("JAVA_TOOL_OPTIONS");
        assertThat(options).contains("-XX:MaxRAMPercentage=").contains("-XX:+ExitOnOutOfMemoryError")
                .doesNotContain("-Xmx");
        // The chart passes the same defaults.
        assertThat(((Map<?, ?>) chartValues.get("jvm")).get("toolOptions")).isEqualTo(options);
    }

    @Test
    void entrypointIsExecFormSoSigtermReachesTheJvm() {
        Stage runtime = stages.get(stages.size() - 1);
        String entrypoint = runtime.last("ENTRYPOINT").args();
        List<String> argv = jsonArray(entrypoint);
        assertThat(argv).as("ENTRYPOINT must be a JSON array (exec form): %s", entrypoint).isNotNull();
        assertThat(argv.get(0)).isEqualTo("java");
        assertThat(argv).containsSequence("-jar", "/app/leasehold.jar").doesNotContain("sh", "-c", "/bin/sh");
        assertThat(runtime.all("CMD")).as("no shell-form CMD either")
                .allMatch(i -> jsonArray(i.args()) != null);
        assertThat(runtime.all("STOPSIGNAL")).allMatch(i -> i.args().equals("SIGTERM"));
    }

    @Test
    void theRuntimeStageTrainsTheAppCdsArchiveItStartsFrom() {
        // Java 17 takes an archive only from the JVM and the jar paths that run it: made in the
        // runtime stage (before USER, checked above), from the jar extracted in the build stage,
        // which makes none of its own (docs/deploy.md, "Start time").
        Stage runtime = stages.get(stages.size() - 1);
        assertThat(stages.get(0).all("RUN")).anyMatch(i -> i.args().contains("-Dcds.skip=true")
                && i.args().contains("-Djarmode=tools") && i.args().contains("extract"));
        assertThat(runtime.all("RUN")).anyMatch(i -> i.args().contains("leasehold-cds /app"));
        assertThat(jsonArray(runtime.last("ENTRYPOINT").args()))
                .containsSequence("-XX:SharedArchiveFile=/app/leasehold.jsa", "-jar", "/app/leasehold.jar");
    }

    @Test
    void dockerignoreKeepsTheContextSmallButLetsTheBuildInputsThrough() throws IOException {
        List<String> rules = Files.readAllLines(Path.of(".dockerignore")).stream().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        assertThat(rules.get(0)).as("allow-list: exclude everything first").isEqualTo("*");
        // Whatever the build stage COPYs from the context exists and is allowed back in.
        List<String> copied = new ArrayList<>();
        for (Instruction copy : stages.get(0).all("COPY")) {
            List<String> parts = new ArrayList<>(Arrays.asList(copy.args().split("\\s+")));
            parts.removeIf(p -> p.startsWith("--"));
            copied.addAll(parts.subList(0, parts.size() - 1));
        }
        assertThat(copied).containsExactlyInAnyOrder("mvnw", "pom.xml", "server-pom.xml", ".mvn", "client", "spring",
                "src", "bin");
        for (String source : copied) {
            assertThat(Path.of(source)).exists();
            assertThat(rules).as(".dockerignore must re-include %s", source)
                    .anyMatch(r -> r.equals("!" + source) || r.equals("!" + source + "/"));
        }
        assertThat(rules).noneMatch(r -> r.startsWith("!target") || r.startsWith("!data") || r.startsWith("!.git"));
    }

    // ---------------------------------------------------------------- parsing

    static List<Stage> parse(List<String> lines) {
        List<Stage> result = new ArrayList<>();
        List<Instruction> current = null;
        StringBuilder logical = new StringBuilder();
        int start = 0;
        for (int n = 0; n < lines.size(); n++) {
            String line = lines.get(n);
            String trimmed = line.strip();
            if (trimmed.startsWith("#") || (trimmed.isEmpty() && logical.isEmpty())) {
                continue; // comments (and parser directives) are not instructions
            }
            if (logical.isEmpty()) {
                start = n + 1;
            }
            if (trimmed.endsWith("\\")) {
                logical.append(trimmed, 0, trimmed.length() - 1).append(' ');
                continue;
            }
            logical.append(trimmed);
            String text = logical.toString().strip();
            logical.setLength(0);
            if (text.isEmpty()) {
                continue;
            }
            String[] kv = text.split("\\s+", 2);
            Instruction instruction = new Instruction(start, kv[0].toUpperCase(Locale.ROOT),
                    kv.length > 1 ? kv[1].strip().replaceAll("\\s+", " ") : "");
            if (instruction.keyword().equals("FROM")) {
                String[] from = instruction.args().split("\\s+");
                String alias = from.length >= 3 && from[1].equalsIgnoreCase("AS") ? from[2] : null;
                current = new ArrayList<>();
                result.add(new Stage(from[0], alias, current));
            }
            else {
                assertThat(current).as("instruction before the first FROM at line %d", start).isNotNull();
                current.add(instruction);
            }
        }
        assertThat(logical.toString().strip()).as("dangling line continuation").isEmpty();
        return result;
    }

    static final Pattern ENV_PAIR = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|\\S+)");

    static Map<String, String> env(Stage stage) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (Instruction i : stage.all("ENV")) {
            Matcher m = ENV_PAIR.matcher(i.args());
            while (m.find()) {
                String value = m.group(2);
                env.put(m.group(1), value.startsWith("\"") ? value.substring(1, value.length() - 1) : value);
            }
        }
        return env;
    }

    /** The strings of a JSON array of strings (what exec form must be), or null if it is not one. */
    static List<String> jsonArray(String text) {
        if (!text.startsWith("[") || !text.endsWith("]")) {
            return null;
        }
        try {
            // A JSON array of strings is valid YAML flow syntax.
            Object parsed = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
            if (parsed instanceof List<?> list && list.stream().allMatch(String.class::isInstance)
                    && text.indexOf('\'') < 0) {
                return list.stream().map(String.class::cast).toList();
            }
            return null;
        }
        catch (YAMLException e) {
            return null;
        }
    }
}
