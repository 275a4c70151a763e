package dev.leasehold.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The alert rules (helm/leasehold/files/prometheus-rules.yaml) checked and unit-tested by the real
 * {@code promtool} (Debian's {@code prometheus} package; .ci/run installs it): every alert fires
 * on the series of its firing case and not on the others (src/test/resources/prometheus/
 * rules-tests.yaml). Skipped, saying so, where promtool is not installed.
 */
class PrometheusRulesIntegrationTests {

    static final Path RULES = Path.of("helm", "leasehold", "files", "prometheus-rules.yaml");
    static final Path RULE_TESTS = Path.of("src", "test", "resources", "prometheus", "rules-tests.yaml");

    @Test
    void rulesFileIsValid() throws Exception {
        Result r = promtool("check", "rules", RULES.toString());
        assertThat(r.exit()).as("promtool check rules:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS: " + alertNames().size() + " rules found");
    }

    @Test
    void everyAlertFiresAndStaysQuietInItsUnitTests() throws Exception {
        Result r = promtool("test", "rules", RULE_TESTS.toString());
        assertThat(r.exit()).as("promtool test rules:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("SUCCESS");
        String tests = Files.readString(RULE_TESTS);
        for (String alert : alertNames()) {
            // Each alert has a firing case (exp_alerts with labels) and a quiet one (exp_alerts: []).
            Pattern firing = Pattern.compile("alertname: " + alert + "\\s+exp_alerts:\\s+- exp_labels");
            Pattern quiet = Pattern.compile("alertname: " + alert + "\\s+exp_alerts: \\[\\]");
            assertThat(firing.matcher(tests).find()).as("a firing case for %s", alert).isTrue();
            assertThat(quiet.matcher(tests).find()).as("a quiet case for %s", alert).isTrue();
        }
    }

    /** The alerts of the rules file, in order. */
    static List<String> alertNames() throws IOException {
        Matcher m = Pattern.compile("(?m)^\\s*- alert: (\\w+)$").matcher(Files.readString(RULES));
        List<String> names = new java.util.ArrayList<>();
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    record Result(int exit, String output) {
    }

    static Result promtool(String... args) throws IOException, InterruptedException {
        Path promtool = Tools.find("promtool");
        assumeTrue(promtool != null, "promtool is not installed (Debian: apt-get install prometheus; .ci/run does)");
        List<String> cmd = new java.util.ArrayList<>(List.of(promtool.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("promtool " + String.join(" ", args) + " did not end within 60 s");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
