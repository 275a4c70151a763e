package dev.leasehold.admin;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.PropertySource;
import org.springframework.web.server.WebFilter;

/**
 * Registers the {@link LoopbackOnlyFilter}s wherever Actuator's endpoints are served: the main
 * context when management shares {@code server.port}, the management child context when
 * {@code management.server.port} differs (a plain bean would miss that one and leave the
 * endpoint open).
 *
 * <p>The {@code cluster} and {@code snapshot} endpoints answer loopback callers only, always. The {@code locks}
 * endpoint (it shows key names and holders) is exposed by the shipped {@code application.yml},
 * so that {@code leasehold inspect} and {@code top} work on a default server, whose management
 * port binds 127.0.0.1; while that default is what exposes it, it answers loopback callers only,
 * so a management port bound to every address (the Docker image, the Helm chart) shows holders
 * to nobody outside the node. An operator who names the exposure list themselves (command line,
 * environment, their own configuration file) decides who reads it, as before (docs/security.md).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
public class AdminManagementConfiguration {

    /** The property whose provenance decides whether {@code locks} is guarded. */
    static final String EXPOSURE = "management.endpoints.web.exposure.include";

    /** How Spring Boot names the property source of the {@code application.yml} inside the jar. */
    private static final String SHIPPED = "class path resource [application.yml]";

    @Bean
    LoopbackOnlyFilter leaseholdClusterLoopbackOnly(
            @Value("${management.endpoints.web.base-path:/actuator}") String basePath) {
        return new LoopbackOnlyFilter(base(basePath) + "/" + ClusterEndpoint.ID);
    }

    @Bean
    LoopbackOnlyFilter leaseholdSnapshotLoopbackOnly(
            @Value("${management.endpoints.web.base-path:/actuator}") String basePath) {
        return new LoopbackOnlyFilter(base(basePath) + "/" + SnapshotEndpoint.ID);
    }

    @Bean
    WebFilter leaseholdLocksLoopbackOnly(
            @Value("${management.endpoints.web.base-path:/actuator}") String basePath, ConfigurableEnvironment env) {
        if (!exposedByShippedDefault(env)) {
            return (exchange, chain) -> chain.filter(exchange); // the operator's own exposure: their choice
        }
        return new LoopbackOnlyFilter(base(basePath) + "/locks",
                "the locks endpoint (exposed by the default settings) answers",
                "run leasehold inspect on the node, or name locks in " + EXPOSURE + " yourself to read it from "
                        + "elsewhere; docs/security.md");
    }

    /**
     * True when the exposure list comes from the {@code application.yml} shipped in the jar: the
     * first property source that sets it (in precedence order) is that one.
     */
    static boolean exposedByShippedDefault(ConfigurableEnvironment env) {
        for (PropertySource<?> source : env.getPropertySources()) {
            if (ConfigurationPropertySources.isAttachedConfigurationPropertySource(source)) {
                continue; // the view over every other source
            }
            if (source.containsProperty(EXPOSURE) || source.containsProperty(EXPOSURE + "[0]")) {
                return source.getName().contains(SHIPPED);
            }
        }
        return false;
    }

    private static String base(String basePath) {
        return basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
    }
}
