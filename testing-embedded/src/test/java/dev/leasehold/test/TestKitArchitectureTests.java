package dev.leasehold.test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

import dev.leasehold.testing.support.SuiteRules;

/**
 * What the embedded server may use of the server: its wiring, never Spring Boot (excluded from
 * this artifact's dependencies, so a reference would fail only on a user's class path) or the
 * Actuator, metrics and Spring configuration classes that need it.
 */
class TestKitArchitectureTests {

    private final JavaClasses classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.leasehold.test");

    @Test
    void staysOffSpringBoot() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("org.springframework.boot..",
                "dev.leasehold.metrics..", "dev.leasehold.health..", "dev.leasehold.admin..", "dev.leasehold.inspect..")
                .check(classes);
    }

    @Test
    void unitTestsStayInProcess() {
        SuiteRules.checkTestsOf("dev.leasehold.test");
    }
}
