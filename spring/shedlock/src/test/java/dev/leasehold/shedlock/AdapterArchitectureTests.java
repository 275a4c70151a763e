package dev.leasehold.shedlock;

import org.junit.jupiter.api.Test;

import dev.leasehold.testing.support.SuiteRules;

/**
 * The adapter stands on the client's public API only (not its internals, not the wire protocol,
 * nothing of the server), and its unit tests stay in process: {@link SuiteRules#checkAdapter}.
 */
class AdapterArchitectureTests {

    @Test
    void usesOnlyThePublicClientApiAndUnitTestsStayInProcess() {
        SuiteRules.checkAdapter("dev.leasehold.shedlock");
    }
}
