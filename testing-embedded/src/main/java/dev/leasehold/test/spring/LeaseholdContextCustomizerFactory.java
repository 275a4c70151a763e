package dev.leasehold.test.spring;

import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

import dev.leasehold.test.TestingCluster;
import dev.leasehold.test.TestingServer;

/**
 * Turns {@link EmbeddedLeaseholdServer} into a {@link ContextCustomizer} (registered in
 * {@code META-INF/spring.factories}, so Spring's test framework finds it on its own).
 */
public final class LeaseholdContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public ContextCustomizer createContextCustomizer(Class<?> testClass, List<ContextConfigurationAttributes> attributes) {
        EmbeddedLeaseholdServer a = TestContextAnnotationUtils.findMergedAnnotation(testClass, EmbeddedLeaseholdServer.class);
        return a == null ? null : new Customizer(a.nodes(), a.property());
    }

    /** Equal settings, equal customizers: Spring's context cache keys on them. */
    private record Customizer(int nodes, String property) implements ContextCustomizer {

        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
            AutoCloseable fixture;
            String servers;
            String beanName;
            if (nodes == 1) {
                TestingServer server = TestingServer.start();
                fixture = server;
                servers = server.address();
                beanName = "leaseholdTestingServer";
            } else {
                TestingCluster cluster = TestingCluster.start(nodes);
                fixture = cluster;
                servers = cluster.connectString();
                beanName = "leaseholdTestingCluster";
            }
            context.getEnvironment().getPropertySources()
                    .addFirst(new MapPropertySource("leasehold-test", Map.of(property, servers)));
            var beans = context.getBeanFactory();
            beans.registerSingleton(beanName, fixture);
            if (beans instanceof DefaultSingletonBeanRegistry registry) {
                registry.registerDisposableBean(beanName, fixture::close);
            } else {
                Runtime.getRuntime().addShutdownHook(new Thread(() -> close(fixture), "leasehold-test-stop"));
            }
        }

        private static void close(AutoCloseable fixture) {
            try {
                fixture.close();
            } catch (Exception e) {
                throw new IllegalStateException("stopping the embedded Leasehold server failed", e);
            }
        }
    }
}
