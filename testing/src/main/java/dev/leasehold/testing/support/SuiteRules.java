package dev.leasehold.testing.support;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaAnnotation;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;

/**
 * The rule that keeps the suite's shape (docs/testing.md): a class named {@code *Tests} is a fast
 * unit test that Surefire runs in {@code test}; it opens no socket, starts no process and no Spring
 * application, directly or through a test fixture. Anything that does is an
 * {@code *IntegrationTests}, which Failsafe runs after {@code package}.
 *
 * <p>Each module checks its own test classes with it (import them with
 * {@code ImportOption.OnlyIncludeTests}). The check follows dependencies through the imported test
 * classes (fixtures, helpers, nested classes), not through production code: a unit test may use a
 * production class that could open a socket (the client, say) as long as the test never makes it
 * connect, which is what the fixtures that the check does see are for.
 */
public final class SuiteRules {

    /**
     * Classes and packages whose use means "opens a socket, starts a process or a Spring
     * application". Names, not types, so that this module needs none of them on its class path.
     */
    private static final List<String> OUT_OF_PROCESS_OR_NETWORK = List.of(
            "java.net.Socket", "java.net.ServerSocket", "java.net.DatagramSocket", "java.net.http.",
            "java.net.HttpURLConnection", "java.nio.channels.SocketChannel", "java.nio.channels.ServerSocketChannel",
            "java.nio.channels.AsynchronousSocketChannel", "java.nio.channels.AsynchronousServerSocketChannel",
            "java.lang.ProcessBuilder", "java.lang.Process",
            "org.springframework.boot.SpringApplication", "org.springframework.boot.builder.SpringApplicationBuilder",
            "org.springframework.boot.test.context.SpringBootTest", "org.springframework.boot.test.context.runner.",
            "reactor.netty.tcp.", "reactor.netty.http.", "io.netty.bootstrap.",
            "org.apache.ratis.server.RaftServer", "org.apache.ratis.client.RaftClient",
            "dev.leasehold.testing.support.LoopbackServer");

    private SuiteRules() {
    }

    /**
     * Checks {@link #unitTestsStayInProcess()} on the test classes (this module's
     * {@code test-classes}) under {@code packages}: one line in each module's architecture test.
     */
    public static void checkTestsOf(String... packages) {
        unitTestsStayInProcess().check(new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .importPackages(packages));
    }

    /**
     * The whole architecture check of a Spring adapter module, one line in its test: the main
     * classes under {@code adapterPackage} use the client's public API only (not its internals,
     * not the wire protocol, nothing of the server, which is not even on an adapter's class path
     * at run time), and its unit tests stay in process ({@link #checkTestsOf}).
     */
    public static void checkAdapter(String adapterPackage) {
        ArchRuleDefinition.noClasses().should().dependOnClassesThat().resideInAnyPackage(
                        "dev.leasehold.client.internal..", "dev.leasehold.protocol..", "dev.leasehold.server..",
                        "dev.leasehold.registry..", "dev.leasehold.store..", "dev.leasehold.config..")
                .because("an adapter stands on the client's public API only")
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages(adapterPackage));
        checkTestsOf(adapterPackage);
    }

    /** {@code *Tests} (not {@code *IntegrationTests}) open no socket and start no process or application. */
    public static ArchRule unitTestsStayInProcess() {
        return ArchRuleDefinition.classes().that(areUnitTests())
                .should(neverReachTheNetworkOrAProcess())
                .because("the suffix picks the runner (docs/testing.md): a test that opens a socket, starts a process"
                        + " or a Spring application is an *IntegrationTests and runs in Failsafe");
    }

    private static DescribedPredicate<JavaClass> areUnitTests() {
        return DescribedPredicate.describe("are unit tests (*Tests, and their nested classes)", c -> {
            String name = topLevel(c).getSimpleName();
            return name.endsWith("Tests") && !name.endsWith("IntegrationTests");
        });
    }

    private static JavaClass topLevel(JavaClass c) {
        JavaClass top = c;
        for (Optional<JavaClass> outer = c.getEnclosingClass(); outer.isPresent(); outer = outer.get().getEnclosingClass()) {
            top = outer.get();
        }
        return top;
    }

    private static ArchCondition<JavaClass> neverReachTheNetworkOrAProcess() {
        return new ArchCondition<>("open no socket and start no process or Spring application, directly or through test code") {
            @Override
            public void check(JavaClass test, ConditionEvents events) {
                Set<JavaClass> seen = new HashSet<>();
                Deque<List<JavaClass>> paths = new ArrayDeque<>();
                paths.add(List.of(test));
                seen.add(test);
                while (!paths.isEmpty()) {
                    List<JavaClass> path = paths.poll();
                    JavaClass at = path.get(path.size() - 1);
                    Optional<String> use = outOfProcessUse(at);
                    if (use.isPresent()) {
                        events.add(SimpleConditionEvent.violated(test, test.getName() + " reaches " + use.get()
                                + " via " + names(path)));
                        return;
                    }
                    for (Dependency d : at.getDirectDependenciesFromSelf()) {
                        JavaClass target = d.getTargetClass();
                        // Only test code is followed; production classes end the walk.
                        if (isTestCode(target) && seen.add(target)) {
                            List<JavaClass> next = new ArrayList<>(path);
                            next.add(target);
                            paths.add(next);
                        }
                    }
                }
            }
        };
    }

    /**
     * What {@code c} does with a forbidden class, if anything: calls it, constructs it, reads its
     * fields, extends it or is annotated with it. A parameter or return type alone is no use (a
     * key manager's {@code chooseClientAlias(..., Socket)} opens nothing).
     */
    private static Optional<String> outOfProcessUse(JavaClass c) {
        for (JavaAccess<?> a : c.getAccessesFromSelf()) {
            if (isOutOfProcessOrNetwork(a.getTargetOwner().getName())) {
                return Optional.of(a.getTargetOwner().getName() + " (" + a.getDescription() + ")");
            }
        }
        for (JavaClass supertype : c.getAllRawSuperclasses()) {
            if (isOutOfProcessOrNetwork(supertype.getName())) {
                return Optional.of(supertype.getName() + " (extends it)");
            }
        }
        for (JavaAnnotation<?> annotation : c.getAnnotations()) {
            if (isOutOfProcessOrNetwork(annotation.getRawType().getName())) {
                return Optional.of(annotation.getRawType().getName() + " (annotated with it)");
            }
        }
        return Optional.empty();
    }

    private static boolean isTestCode(JavaClass c) {
        return c.getSource().map(s -> s.getUri().toString().contains("/test-classes/")
                || s.getUri().toString().contains("leasehold-test-support")
                || s.getUri().toString().contains("/testing/target/classes/")).orElse(false);
    }

    static boolean isOutOfProcessOrNetwork(String className) {
        for (String forbidden : OUT_OF_PROCESS_OR_NETWORK) {
            if (forbidden.endsWith(".") ? className.startsWith(forbidden) : className.equals(forbidden)) {
                return true;
            }
        }
        return false;
    }

    private static String names(List<JavaClass> path) {
        StringBuilder b = new StringBuilder();
        for (JavaClass c : path) {
            b.append(b.length() == 0 ? "" : " -> ").append(c.getSimpleName().isEmpty() ? c.getName() : c.getSimpleName());
        }
        return b.toString();
    }
}
