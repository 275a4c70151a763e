package dev.leasehold;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.properties.HasType.Predicates.rawType;
import static com.tngtech.archunit.lang.conditions.ArchPredicates.are;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameStartingWith;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.constructors;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import dev.leasehold.testing.support.SuiteRules;

/**
 * Dependencies go one way: server → protocol, registry; protocol and registry depend on nothing
 * of ours. The official client is JDK-only so any JVM application can use it without dependency
 * conflicts: {@code java.*}, the JDK's TLS ({@code javax.net.ssl}) and the shared protocol package,
 * nothing else.
 */
class ArchitectureTests {

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.leasehold");

    @Test
    void protocolDependsOnlyOnTheJdk() {
        classes().that().resideInAPackage("dev.leasehold.protocol..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.leasehold.protocol..")
                .check(MAIN);
    }

    @Test
    void clientDependsOnlyOnTheJdkAndTheProtocol() {
        classes().that().resideInAPackage("dev.leasehold.client..")
                .should().onlyDependOnClassesThat()
                .resideInAnyPackage("java..", "javax.net.ssl..", "dev.leasehold.client..", "dev.leasehold.protocol..")
                .check(MAIN);
    }

    /**
     * The mechanics speak the public result vocabulary (one set of outcome types, no internal
     * mirror of them) but know nothing else of the public API: not the client, its options or
     * the ticket.
     */
    @Test
    void clientMechanicsDependOnlyOnThePublicOutcomes() {
        noClasses().that().resideInAPackage("dev.leasehold.client.internal..")
                .should().dependOnClassesThat(resideInAPackage("dev.leasehold.client")
                        .and(not(nameStartingWith("dev.leasehold.client.AcquireOutcome")))
                        .and(not(nameStartingWith("dev.leasehold.client.ReleaseOutcome")))
                        .and(not(nameStartingWith("dev.leasehold.client.ExtendOutcome")))
                        .and(not(nameStartingWith("dev.leasehold.client.CheckOutcome")))
                        .and(not(nameStartingWith("dev.leasehold.client.ProclaimOutcome"))))
                .check(MAIN);
    }

    /** What the server and the starter share from the client jar is JDK code, like the client itself. */
    @Test
    void theSharedInternalsDependOnlyOnTheJdk() {
        classes().that().resideInAPackage("dev.leasehold.internal..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.leasehold.internal..")
                .check(MAIN);
    }

    @Test
    void nothingOnTheServerSideUsesTheClient() {
        noClasses().that().resideOutsideOfPackage("dev.leasehold.client..")
                .should().dependOnClassesThat().resideInAPackage("dev.leasehold.client..")
                .check(MAIN);
    }

    @Test
    void registryKnowsNoNettyNoSpringAndNoOtherPartOfUs() {
        noClasses().that().resideInAPackage("dev.leasehold.registry..")
                .should().dependOnClassesThat().resideOutsideOfPackages("java..", "dev.leasehold.registry..",
                        "dev.leasehold.protocol..")
                .check(MAIN);
    }

    /**
     * Every layer reports a setting it cannot use with {@code SettingException}, and the failure
     * analyzer in {@code config} reads it: so its package depends on nothing of ours.
     */
    @Test
    void settingsDependOnlyOnTheJdk() {
        classes().that().resideInAPackage("dev.leasehold.settings..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.leasehold.settings..")
                .check(MAIN);
    }

    @Test
    void storeDoesNotKnowTheServer() {
        noClasses().that().resideInAPackage("dev.leasehold.store..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.leasehold.server..", "io.netty..",
                        "reactor..", "org.springframework..")
                .check(MAIN);
    }

    @Test
    void serverDoesNotDependOnConfigOrActuatorAdapters() {
        noClasses().that().resideInAPackage("dev.leasehold.server..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.leasehold.config..",
                        "dev.leasehold.health..", "dev.leasehold.metrics..")
                .check(MAIN);
    }

    /**
     * Single node or cluster is chosen once per server ({@code Outboxes}); the session pipeline
     * asks its session's {@code Outbox} and never learns which mode runs: only the commit-gated
     * outbox knows the cluster's gate, and nothing names an outbox implementation but the factory.
     */
    @Test
    void theSessionPipelineNeverAsksWhichModeRuns() {
        noClasses().that().resideInAPackage("dev.leasehold.server..")
                .and().doNotHaveSimpleName("CommitGatedOutbox").and().doNotHaveSimpleName("Outboxes")
                .and().haveNameNotMatching("dev\\.leasehold\\.server\\.ServingGate.*")
                .should().dependOnClassesThat().haveNameMatching("dev\\.leasehold\\.server\\.ServingGate.*")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.leasehold.server..").and().doNotHaveSimpleName("Outboxes")
                .and().haveNameNotMatching(".*(Direct|CommitGated)Outbox.*")
                .should().dependOnClassesThat().haveNameMatching(".*(Direct|CommitGated)Outbox.*")
                .check(MAIN);
    }

    @Test
    void clusterIsAnAdapterThatTheServerAndRegistryDoNotKnow() {
        noClasses().that().resideInAnyPackage("dev.leasehold.server..", "dev.leasehold.registry..",
                        "dev.leasehold.store..")
                .should().dependOnClassesThat().resideInAPackage("dev.leasehold.cluster..")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.leasehold.cluster..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.leasehold.config..",
                        "dev.leasehold.health..", "dev.leasehold.metrics..")
                .check(MAIN);
    }

    /**
     * The cluster reaches the protocol server only through {@code ServingGate} and the
     * leadership-lost callback it is handed; membership changes see a narrow view of the node,
     * not the node; and cluster decisions read the injected clock, never {@code System.nanoTime()}.
     */
    @Test
    void clusterDecisionsTakeNarrowViewsAndTheInjectedClock() {
        noClasses().that().resideInAPackage("dev.leasehold.cluster..")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.leasehold.server.LeaseholdServer")
                .check(MAIN);
        noClasses().that().haveNameMatching("dev\\.leasehold\\.cluster\\.Member.*")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.leasehold.cluster.ClusterNode")
                .check(MAIN);
        noClasses().that().resideInAPackage("dev.leasehold.cluster..")
                .should().callMethod(System.class, "nanoTime")
                .check(MAIN);
    }

    /**
     * The node's parts see it through one {@code RaftHost}, not through the node itself nor one
     * lambda per field of it (code review 5, item 3): only {@code ClusterNode} names
     * {@code ClusterNode} in cluster/, and no constructor there takes more than one supplier.
     */
    @Test
    void clusterPartsSeeTheNodeThroughOneHost() {
        noClasses().that().resideInAPackage("dev.leasehold.cluster..")
                .and().haveNameNotMatching("dev\\.leasehold\\.cluster\\.ClusterNode(\\$.*)?")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.leasehold.cluster.ClusterNode")
                .check(MAIN);
        constructors().that().areDeclaredInClassesThat().resideInAPackage("dev.leasehold.cluster..")
                .should(new ArchCondition<JavaConstructor>("take at most one supplier") {
                    @Override
                    public void check(JavaConstructor c, ConditionEvents events) {
                        long suppliers = c.getRawParameterTypes().stream()
                                .filter(t -> t.getPackageName().equals("java.util.function")
                                        && t.getSimpleName().endsWith("Supplier"))
                                .count();
                        if (suppliers > 1) {
                            events.add(SimpleConditionEvent.violated(c, c.getFullName() + " takes " + suppliers
                                    + " suppliers: hand it the RaftHost instead"));
                        }
                    }
                })
                .check(MAIN);
    }

    /**
     * {@code config} wires: settings, one configuration per concern, the mode seam, and the
     * failure analyzers that turn start-up errors into Spring's report; behaviour lives elsewhere.
     */
    @Test
    void configHoldsOnlyWiring() {
        classes().that().resideInAPackage("dev.leasehold.config").and().areTopLevelClasses()
                .and().doNotHaveSimpleName("package-info")
                .should().haveSimpleNameEndingWith("Properties").orShould().haveSimpleNameEndingWith("Configuration")
                .orShould().haveSimpleName("NodeMode").orShould().haveSimpleNameEndingWith("FailureAnalyzer")
                .orShould().haveSimpleName("ConditionalOnClusterMode")
                .check(MAIN);
    }

    /** Every main package says what lives there. */
    @Test
    void everyMainPackageHasAPackageInfo() throws IOException {
        Path root = Path.of("src/main/java/dev/leasehold");
        try (Stream<Path> dirs = Files.walk(root)) {
            List<Path> without = dirs.filter(Files::isDirectory).filter(d -> !d.equals(root))
                    .filter(ArchitectureTests::holdsJava).filter(d -> !Files.exists(d.resolve("package-info.java")))
                    .toList();
            assertThat(without).as("packages without a package-info.java").isEmpty();
        }
    }

    /**
     * Small rooms everywhere (docs/architecture.md): no main source file of any module over 500
     * lines, the Go client's included. The reactor's modules are the roots below; the load
     * generator (bench/, a separate project that is never shipped) is left out. No allow-list:
     * a file that grows past the line is split by job.
     */
    @Test
    void noMainSourceFileOver500Lines() throws IOException {
        List<Path> roots = List.of(Path.of("src/main/java"), Path.of("client/src/main/java"),
                Path.of("testing/src/main/java"), Path.of("testing-embedded/src/main/java"),
                Path.of("spring/integration/src/main/java"), Path.of("spring/shedlock/src/main/java"),
                Path.of("spring/boot-starter/src/main/java"), Path.of("clients/go"));
        List<String> big = new java.util.ArrayList<>();
        for (Path root : roots) {
            assertThat(root).as("a module's main sources (a module moved? update this list)").isDirectory();
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(f -> f.toString().endsWith(".java")
                                || (f.toString().endsWith(".go") && !f.toString().endsWith("_test.go")))
                        .filter(f -> lineCount(f) > 500)
                        .forEach(f -> big.add(f + " " + lineCount(f)));
            }
        }
        assertThat(big).as("main files over 500 lines (split them: a class a job)").isEmpty();
    }

    private static int lineCount(Path file) {
        try {
            return Files.readAllLines(file).size();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean holdsJava(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(f -> f.toString().endsWith(".java"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void unitTestsStayInProcess() {
        SuiteRules.checkTestsOf("dev.leasehold");
    }

    /** One name for a logger constant in every module: {@code LOG} (SLF4J here, System.Logger in the client). */
    @Test
    void loggersAreNamedLog() {
        fields().that(are(rawType(org.slf4j.Logger.class).or(rawType(System.Logger.class))))
                .and().doNotHaveModifier(JavaModifier.SYNTHETIC) // a lambda's captured local is no constant
                .should().haveName("LOG").andShould().beStatic().andShould().beFinal()
                .check(MAIN);
    }
}
