package dev.leasehold.spring.boot;

import org.junit.jupiter.api.Test;

import dev.leasehold.testing.support.SuiteRules;

/**
 * The adapter stands on the client's public API only (not its internals, not the wire protocol,
 * nothing of the server), and its unit tests stay in process: {@link SuiteRules#checkAdapter}.
 * The one exception is {@code dev.leasehold.internal.NearestSetting}, the "did you mean" it shares
 * with the server's unknown-setting report (that package is not the client's, so the rule allows it).
 */
class AdapterArchitectureTests {

    @Test
    void usesOnlyThePublicClientApiAndUnitTestsStayInProcess() {
        SuiteRules.checkAdapter("dev.leasehold.spring.boot");
    }
}
