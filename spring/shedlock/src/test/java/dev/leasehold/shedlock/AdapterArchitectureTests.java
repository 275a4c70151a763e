package dev.leasehold.shedlock;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

import dev.leasehold.testing.support.SuiteRules;

/**
 * The adapter stands on the client's public API only: not its internals, not the wire protocol,
 * and nothing of the server (which is not even on its class path at run time).
 */
class AdapterArchitectureTests {

    private final JavaClasses classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.leasehold.shedlock");

    @Test
    void usesOnlyThePublicClientApi() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.leasehold.client.internal..",
                "dev.leasehold.protocol..", "dev.leasehold.server..", "dev.leasehold.registry..",
                "dev.leasehold.store..", "dev.leasehold.config..")
                .check(classes);
    }

    @Test
    void unitTestsStayInProcess() {
        SuiteRules.checkTestsOf("dev.leasehold.shedlock");
    }
}
