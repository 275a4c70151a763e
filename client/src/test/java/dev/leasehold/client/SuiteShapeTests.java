package dev.leasehold.client;

import org.junit.jupiter.api.Test;

import dev.leasehold.testing.support.SuiteRules;

/** The client module's unit tests stay in process (docs/testing.md); its tests against a real server live in the server module. */
class SuiteShapeTests {

    @Test
    void unitTestsStayInProcess() {
        SuiteRules.checkTestsOf("dev.leasehold.client", "dev.leasehold.protocol", "dev.leasehold.internal");
    }
}
