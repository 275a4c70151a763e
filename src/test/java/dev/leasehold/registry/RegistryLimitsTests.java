package dev.leasehold.registry;

import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;

class RegistryLimitsTests {

    @Test
    void aBadLimitIsNamedWithTheValuesGiven() {
        // the message once printed `this`, whose fields are still 0 inside a compact constructor
        assertThatIllegalArgumentException().isThrownBy(() -> new RegistryLimits(5, -1, 7, 9))
                .withMessage("limits must be >= 0 (held keys >= 1): maxWaitersPerKey=5, maxWaitersTotal=-1,"
                        + " maxPendingPerSession=7, maxHeldKeys=9");
    }
}
