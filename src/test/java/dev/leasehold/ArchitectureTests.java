package dev.leasehold;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official client is JDK-only so any JVM application can use it without dependency
 * conflicts: it may use {@code java.*} and the shared {@code dev.leasehold.protocol} package and
 * nothing else, and the protocol package only {@code java.*}.
 */
class ArchitectureTests {

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.leasehold");
    }

    @Test
    void clientDependsOnlyOnTheJdkAndTheProtocol() {
        classes().that().resideInAPackage("dev.leasehold.client..")
                .should().onlyDependOnClassesThat()
                .resideInAnyPackage("java..", "dev.leasehold.client..", "dev.leasehold.protocol..")
                .check(classes);
    }

    @Test
    void protocolDependsOnlyOnTheJdk() {
        classes().that().resideInAPackage("dev.leasehold.protocol..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "dev.leasehold.protocol..")
                .check(classes);
    }

    @Test
    void clientMechanicsDoNotDependOnThePublicClientApi() {
        noClasses().that().resideInAPackage("dev.leasehold.client.internal..")
                .should().dependOnClassesThat().resideInAPackage("dev.leasehold.client")
                .check(classes);
    }

    @Test
    void nothingOnTheServerSideUsesTheClient() {
        noClasses().that().resideOutsideOfPackage("dev.leasehold.client..")
                .should().dependOnClassesThat().resideInAPackage("dev.leasehold.client..")
                .check(classes);
    }
}
