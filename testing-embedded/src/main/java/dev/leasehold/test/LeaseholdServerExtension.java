package dev.leasehold.test;

import java.lang.reflect.AnnotatedElement;
import java.util.Optional;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

import dev.leasehold.client.LeaseholdClient;

/**
 * The JUnit 5 extension behind {@link WithLeaseholdServer}: starts a {@link TestingServer} or
 * {@link TestingCluster} before the class (or each method), resolves it and a connected
 * {@link LeaseholdClient} as parameters, and closes it (clients, threads, data directory) after.
 *
 * <p>Also usable without the annotation, where a test wants the address in a field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static LeaseholdServerExtension leasehold = LeaseholdServerExtension.single();
 *
 * @Test
 * void works() {
 *     String servers = leasehold.server().address();
 * }
 * }</pre>
 */
public final class LeaseholdServerExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LeaseholdServerExtension.class);
    private static final String KEY = "fixture";

    private final Settings fixed;
    private volatile AutoCloseable current;

    private record Settings(int nodes, boolean perMethod) {
    }

    /** Used by {@link WithLeaseholdServer}, which carries the settings. */
    public LeaseholdServerExtension() {
        this.fixed = null;
    }

    private LeaseholdServerExtension(Settings fixed) {
        this.fixed = fixed;
    }

    /** For {@code @RegisterExtension}: one server for the class (a static field) or per test (an instance field). */
    public static LeaseholdServerExtension single() {
        return new LeaseholdServerExtension(new Settings(1, false));
    }

    /** For {@code @RegisterExtension}: a three-node cluster for the class (static field) or per test (instance field). */
    public static LeaseholdServerExtension cluster() {
        return new LeaseholdServerExtension(new Settings(3, false));
    }

    /** The running single server (registered with {@link #single()}). */
    public TestingServer server() {
        if (current instanceof TestingServer s) {
            return s;
        }
        throw new IllegalStateException("no TestingServer runs now (" + describe() + ")");
    }

    /** The running cluster (registered with {@link #cluster()}). */
    public TestingCluster testingCluster() {
        if (current instanceof TestingCluster c) {
            return c;
        }
        throw new IllegalStateException("no TestingCluster runs now (" + describe() + ")");
    }

    private String describe() {
        return current == null ? "the extension has not started one; is it registered on this test?" : "it runs " + current;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Optional<Settings> s = settings(context.getRequiredTestClass(), true);
        if (s.isPresent() && !s.get().perMethod()) {
            start(context, s.get());
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Optional<Settings> onMethod = fixed == null ? settings(context.getRequiredTestMethod(), false) : Optional.empty();
        if (onMethod.isPresent()) {
            start(context, onMethod.get());
            return;
        }
        Optional<Settings> onClass = settings(context.getRequiredTestClass(), true);
        boolean instanceField = fixed != null && context.getStore(NAMESPACE).get(KEY) == null;
        if (onClass.isPresent() && (onClass.get().perMethod() || instanceField)) {
            start(context, onClass.get());
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        stopOwnedBy(context);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        stopOwnedBy(context);
    }

    private Optional<Settings> settings(AnnotatedElement element, boolean isClass) {
        if (fixed != null) {
            return Optional.of(fixed);
        }
        Optional<WithLeaseholdServer> a = isClass
                ? AnnotationSupport.findAnnotation((Class<?>) element, WithLeaseholdServer.class, org.junit.platform.commons.support.SearchOption.INCLUDE_ENCLOSING_CLASSES)
                : AnnotationSupport.findAnnotation(element, WithLeaseholdServer.class);
        return a.map(l -> new Settings(l.nodes(), l.perMethod()));
    }

    private void start(ExtensionContext context, Settings s) {
        AutoCloseable fixture = s.nodes() == 1 ? TestingServer.start() : TestingCluster.start(s.nodes());
        context.getStore(NAMESPACE).put(KEY, new Owned(fixture, context.getUniqueId()));
        current = fixture;
    }

    /** A fixture and the context that started it (the store's parent lookup must not close a class's fixture after a method). */
    private record Owned(AutoCloseable fixture, String owner) {
    }

    private void stopOwnedBy(ExtensionContext context) throws Exception {
        ExtensionContext.Store store = context.getStore(NAMESPACE);
        Owned owned = store.get(KEY, Owned.class);
        if (owned != null && owned.owner().equals(context.getUniqueId())) {
            store.remove(KEY);
            Owned outer = store.get(KEY, Owned.class); // the class's fixture, if a method had its own
            current = outer == null ? null : outer.fixture();
            owned.fixture().close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == TestingServer.class || type == TestingCluster.class || type == LeaseholdClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Owned owned = context.getStore(NAMESPACE).get(KEY, Owned.class);
        Class<?> type = parameter.getParameter().getType();
        if (owned == null) {
            throw new ParameterResolutionException("no Leasehold server runs for " + context.getDisplayName()
                    + " (a per-method server is not there yet in @BeforeAll or a constructor)");
        }
        Object fixture = owned.fixture();
        if (type.isInstance(fixture)) {
            return fixture;
        }
        if (type == LeaseholdClient.class) {
            return fixture instanceof TestingServer s ? s.client() : ((TestingCluster) fixture).client();
        }
        throw new ParameterResolutionException("a " + type.getSimpleName() + " was asked for, but the extension runs "
                + fixture + " (@WithLeaseholdServer(nodes = " + (fixture instanceof TestingServer ? "3" : "1") + ") gives that)");
    }
}
