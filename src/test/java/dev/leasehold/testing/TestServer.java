package dev.leasehold.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.leasehold.LeaseholdApplication;
import dev.leasehold.client.ClientOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.server.LeaseholdServer;

/**
 * The real Leasehold application, started in this JVM on random ports (protocol and HTTP) with
 * a temporary data directory, for integration tests. {@link #close()} stops it and deletes the
 * directory (unless the test passed its own {@code leasehold.data-dir}).
 */
public final class TestServer implements AutoCloseable {

    private final ConfigurableApplicationContext context;
    private final Path dataDir;
    private final boolean ownsDataDir;

    private TestServer(ConfigurableApplicationContext context, Path dataDir, boolean ownsDataDir) {
        this.context = context;
        this.dataDir = dataDir;
        this.ownsDataDir = ownsDataDir;
    }

    public static TestServer start() {
        return start(Map.of());
    }

    /**
     * Starts with these extra properties (e.g. {@code "leasehold.max-waiters-per-key", "2"}).
     * The recovery grace is off ({@code leasehold.recovery-grace=0s}) unless a test sets it: a
     * fresh data directory has none anyway (first start), but a test that starts again on the same
     * directory would otherwise wait for its previous leases.
     * Health shows details ({@code management.endpoint.health.show-details=always}) unless a
     * test sets it.
     */
    public static TestServer start(Map<String, String> extraProperties) {
        return start(extraProperties, new Class<?>[0]);
    }

    /** As {@link #start(Map)}, with extra configuration classes (e.g. beans that replace a seam). */
    public static TestServer start(Map<String, String> extraProperties, Class<?>... extraSources) {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("leasehold.port", "0");
        props.put("server.port", "0");
        props.put("leasehold.io-threads", "2");
        props.put("leasehold.recovery-grace", "0s");
        // Health tests read details, which the packaged default hides (docs/security.md); a test
        // of that default passes management.endpoint.health.show-details itself.
        props.put("management.endpoint.health.show-details", "always");
        props.putAll(extraProperties);
        boolean owns = !props.containsKey("leasehold.data-dir");
        Path dir;
        try {
            dir = owns ? Files.createTempDirectory("leasehold-test") : Path.of(props.get("leasehold.data-dir"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        props.put("leasehold.data-dir", dir.toString());
        List<String> args = new ArrayList<>();
        props.forEach((k, v) -> args.add("--" + k + "=" + v));
        List<Class<?>> sources = new ArrayList<>(List.of(LeaseholdApplication.class));
        sources.addAll(List.of(extraSources));
        SpringApplication app = new SpringApplicationBuilder(sources.toArray(Class<?>[]::new)).build();
        try {
            return new TestServer(app.run(args.toArray(String[]::new)), dir, owns);
        } catch (RuntimeException e) {
            if (owns) {
                deleteTree(dir);
            }
            throw e;
        }
    }

    /** The protocol port. */
    public int port() {
        return context.getBean(LeaseholdServer.class).port();
    }

    /** The HTTP (Actuator) port. */
    public int httpPort() {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port", "-1"));
    }

    public Path dataDir() {
        return dataDir;
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    public ConfigurableApplicationContext context() {
        return context;
    }

    @Override
    public void close() {
        context.close();
        if (ownsDataDir) {
            deleteTree(dataDir);
        }
    }

    public static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * One server for a whole test class: started before its first test, closed after its last.
     * Register it as {@code @RegisterExtension static final TestServer.PerClass server =
     * TestServer.perClass();}; it answers the same questions as the server it holds.
     */
    public static PerClass perClass() {
        return new PerClass(Map.of());
    }

    /** As {@link #perClass()}, started with {@code extraProperties}. */
    public static PerClass perClass(Map<String, String> extraProperties) {
        return new PerClass(extraProperties);
    }

    /** See {@link #perClass()}. */
    public static final class PerClass implements BeforeAllCallback, AfterAllCallback {

        private final Map<String, String> extraProperties;
        private TestServer server;
        private LeaseholdClient client;

        private PerClass(Map<String, String> extraProperties) {
            this.extraProperties = extraProperties;
        }

        @Override
        public void beforeAll(ExtensionContext context) {
            server = TestServer.start(extraProperties);
        }

        @Override
        public void afterAll(ExtensionContext context) {
            if (client != null) {
                client.close();
                client = null;
            }
            if (server != null) {
                server.close();
                server = null;
            }
        }

        public int port() {
            return server.port();
        }

        /** A client of this server (default options), made on first use and closed with the server. */
        public synchronized LeaseholdClient client() {
            if (client == null) {
                client = LeaseholdClient.create(ClientOptions.defaults(),
                        List.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), port())));
            }
            return client;
        }

        public int httpPort() {
            return server.httpPort();
        }

        public Path dataDir() {
            return server.dataDir();
        }

        public <T> T bean(Class<T> type) {
            return server.bean(type);
        }

        public ConfigurableApplicationContext context() {
            return server.context();
        }
    }
}
