package dev.leasehold.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The context without a term, as {@link LeaseholdLeaderInitiator#getContext()} returns it when not leading. */
class LeaseholdLeaderContextTests {

    @Test
    void aContextWithoutATermIsNoLeaderAndHasNoTerm() {
        LeaseholdLeaderContext none = LeaseholdLeaderContext.notLeading("billing");
        assertThat(none.isLeader()).isFalse();
        assertThat(none.getRole()).isEqualTo("billing");
        assertThat(none.leadership()).isEmpty();
        assertThatThrownBy(none::term).isInstanceOf(IllegalStateException.class)
                .hasMessage("not leading: this context of role billing has no term");
        none.yield(); // nothing to yield: no exception, still no leader
        assertThat(none.isLeader()).isFalse();
        assertThat(none).hasToString("LeaseholdLeaderContext{role=billing, no term, isLeader=false}");
    }
}
