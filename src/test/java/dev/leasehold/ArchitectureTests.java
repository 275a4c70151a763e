package dev.leasehold;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/** Dependencies go one way: server → protocol, registry; protocol and registry depend on nothing of ours. */
class ArchitectureTests {

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.leasehold");

    @Test
    void protocolIsPlainJdk() {
        noClasses().that().resideInAPackage("dev.leasehold.protocol..")
                .should().dependOnClassesThat().resideOutsideOfPackages("java..", "dev.leasehold.protocol..")
                .check(MAIN);
    }

    @Test
    void registryKnowsNoNettyNoSpringAndNoOtherPartOfUs() {
        noClasses().that().resideInAPackage("dev.leasehold.registry..")
                .should().dependOnClassesThat().resideOutsideOfPackages("java..", "dev.leasehold.registry..",
                        "dev.leasehold.protocol..")
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
}
