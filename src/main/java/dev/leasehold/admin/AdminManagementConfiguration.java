package dev.leasehold.admin;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.context.annotation.Bean;

/**
 * Registers {@link LoopbackOnlyFilter} (for the {@code cluster} and {@code snapshot} endpoints) wherever Actuator's endpoints are served: the main
 * context when management shares {@code server.port}, the management child context when
 * {@code management.server.port} differs (a plain bean would miss that one and leave the
 * endpoint open).
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
public class AdminManagementConfiguration {

    @Bean
    LoopbackOnlyFilter leaseholdClusterLoopbackOnly(
            @Value("${management.endpoints.web.base-path:/actuator}") String basePath) {
        String base = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
        return new LoopbackOnlyFilter(base + "/" + ClusterEndpoint.ID);
    }

    @Bean
    LoopbackOnlyFilter leaseholdSnapshotLoopbackOnly(
            @Value("${management.endpoints.web.base-path:/actuator}") String basePath) {
        String base = basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath;
        return new LoopbackOnlyFilter(base + "/" + SnapshotEndpoint.ID);
    }
}
