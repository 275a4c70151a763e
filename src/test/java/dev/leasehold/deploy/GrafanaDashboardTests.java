package dev.leasehold.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The Grafana dashboard's shape (helm/leasehold/files/grafana-dashboard.json): the rows the issue
 * asks for, the namespace and pod variables applied to every query, and a description on every
 * panel saying what a bad value means. That every query returns data is checked against a real
 * Prometheus scraping real servers (DashboardPrometheusIntegrationTests).
 */
class GrafanaDashboardTests {

    static final Path DASHBOARD = Path.of("helm", "leasehold", "files", "grafana-dashboard.json");

    @SuppressWarnings("unchecked")
    static Map<String, Object> dashboard() throws IOException {
        return new Yaml().load(Files.readString(DASHBOARD)); // JSON is YAML
    }

    /** Every panel (rows left out). */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> panels() throws IOException {
        List<Map<String, Object>> panels = new ArrayList<>();
        for (Map<String, Object> p : (List<Map<String, Object>>) dashboard().get("panels")) {
            if (!"row".equals(p.get("type"))) {
                panels.add(p);
            }
        }
        return panels;
    }

    /** Every query of every panel. */
    @SuppressWarnings("unchecked")
    static List<String> queries() throws IOException {
        List<String> queries = new ArrayList<>();
        for (Map<String, Object> p : panels()) {
            for (Map<String, Object> t : (List<Map<String, Object>>) p.get("targets")) {
                queries.add((String) t.get("expr"));
            }
        }
        return queries;
    }

    @Test
    @SuppressWarnings("unchecked")
    void hasTheRowsInOrder() throws IOException {
        List<Object> rows = ((List<Map<String, Object>>) dashboard().get("panels")).stream()
                .filter(p -> "row".equals(p.get("type"))).map(p -> p.get("title")).toList();
        assertThat(rows).containsExactly("Traffic", "Waiting", "Trouble", "Capacity", "Node", "Cluster");
    }

    @Test
    @SuppressWarnings("unchecked")
    void namespaceAndPodVariablesFilterEveryQuery() throws IOException {
        List<Map<String, Object>> vars = (List<Map<String, Object>>) ((Map<String, Object>) dashboard().get("templating"))
                .get("list");
        assertThat(vars).extracting(v -> v.get("name")).contains("namespace", "pod");
        assertThat(queries()).isNotEmpty().allSatisfy(q -> assertThat(q)
                .contains("namespace=~\"$namespace\"", "pod=~\"$pod\""));
    }

    @Test
    void everyPanelSaysWhatABadValueMeans() throws IOException {
        assertThat(panels()).allSatisfy(p -> assertThat((String) p.get("description")).as("panel %s", p.get("title"))
                .contains("Bad:"));
    }

    @Test
    void panelIdsAreUnique() throws IOException {
        assertThat(panels()).extracting(p -> p.get("id")).doesNotHaveDuplicates();
    }
}
