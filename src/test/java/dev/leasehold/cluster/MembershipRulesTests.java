package dev.leasehold.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.assertj.core.api.AbstractThrowableAssert;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import dev.leasehold.cluster.MemberView.Member;
import dev.leasehold.cluster.MemberView.Role;

/**
 * The rules a membership change is refused by, on values: ids, addresses, identities, a former
 * member's id, the majority floor and the handover target. Every refusal is {@code REFUSED},
 * not partial (nothing was changed), and says what to do.
 */
class MembershipRulesTests {

    private static AbstractThrowableAssert<?, ? extends Throwable> refused(ThrowingCallable call) {
        return assertThatThrownBy(call).isInstanceOfSatisfying(MembershipException.class, e -> {
            assertThat(e.kind()).isEqualTo(MembershipException.Kind.REFUSED);
            assertThat(e.partial()).isFalse();
        });
    }

    /** A view led by {@code n1}: {@code voters} voters n1..nV, then {@code listeners} listeners l1..lL. */
    private static MemberView view(int voters, int listeners) {
        List<Member> members = new ArrayList<>();
        for (int i = 1; i <= voters; i++) {
            members.add(new Member("n" + i, i == 1 ? Role.LEADER : Role.VOTER, "h:" + i, "h:" + (100 + i),
                    100 - i, -1, 0));
        }
        for (int i = 1; i <= listeners; i++) {
            members.add(new Member("l" + i, Role.LISTENER, "h:" + (10 + i), "h:" + (110 + i), 500, -1, 0));
        }
        return new MemberView("n1", 3, 99, members);
    }

    @Test
    void anIdIsOneTo64LettersDigitsDashesOrUnderscores() {
        for (String ok : List.of("n1", "leasehold-3", "a_b", "x".repeat(64))) {
            assertThatCode(() -> MembershipRules.checkId(ok)).as(ok).doesNotThrowAnyException();
        }
        for (String bad : new String[] {null, "", "x".repeat(65), "n 1", "n/1", "n.1", "é"}) {
            refused(() -> MembershipRules.checkId(bad)).as(bad)
                    .hasMessage("invalid node id '" + bad + "': 1-64 letters, digits, '-' or '_'");
        }
    }

    @Test
    void anAddressIsHostColonPortWithAPortFrom1To65535() {
        for (String ok : List.of("h:1", "10.0.0.7:7430", "[fd00::7]:7430", "h:65535")) {
            assertThatCode(() -> MembershipRules.checkHostPort("raft-address", ok)).as(ok).doesNotThrowAnyException();
        }
        for (String bad : new String[] {null, "h", ":7430", "h:0", "h:65536", "h:port", "h:"}) {
            refused(() -> MembershipRules.checkHostPort("client-address", bad)).as(bad)
                    .hasMessage("invalid client-address '" + bad + "': must be host:port");
        }
    }

    @Test
    void anIdentityIsTypedWhenGiven() {
        for (String ok : new String[] {null, "", "dns:n4.example", "ip:10.0.0.4", "uri:spiffe://c/n4"}) {
            assertThatCode(() -> MembershipRules.checkIdentity(ok)).as(ok).doesNotThrowAnyException();
        }
        for (String bad : List.of("n4.example", "dns:", "email:a@b")) {
            refused(() -> MembershipRules.checkIdentity(bad)).as(bad).hasMessageContaining("invalid identity '" + bad
                    + "': dns:<name>, ip:<address> or uri:<uri>");
        }
    }

    @Test
    void aNodeIsAddedOnlyUnderAnIdThatWasNeverAMember() {
        MemberView v = view(3, 1);
        assertThatCode(() -> MembershipRules.checkAddable(v, "n4", false, false)).doesNotThrowAnyException();
        refused(() -> MembershipRules.checkAddable(v, "n2", false, false))
                .hasMessage("node n2 is already a member (VOTER)");
        refused(() -> MembershipRules.checkAddable(v, "l1", false, false))
                .hasMessage("node l1 is already a member (LISTENER)");
        refused(() -> MembershipRules.checkAddable(v, "n9", true, false))
                .hasMessageStartingWith("id n9 was a member of this cluster before (it stored the log): a node never "
                        + "comes back under a former member's id")
                .hasMessageContaining("new leasehold.cluster.node-id");
        refused(() -> MembershipRules.checkAddable(v, "n9", true, true))
                .hasMessageStartingWith("id n9 was a member of this cluster before (it was removed)");
    }

    @Test
    void aVoterIsRemovedOnlyIfAMajorityOfTheVotersNowRemains() {
        assertThatCode(() -> MembershipRules.checkRemovable(view(3, 0), "n3")).as("3 → 2 voters, majority 2")
                .doesNotThrowAnyException();
        assertThatCode(() -> MembershipRules.checkRemovable(view(5, 0), "n1")).as("5 → 4, majority 3")
                .doesNotThrowAnyException();
        refused(() -> MembershipRules.checkRemovable(view(2, 0), "n2")).hasMessage("removing n2 would leave 1 "
                + "voter(s), fewer than a majority (2) of the 2 voters now; add a member first");
        refused(() -> MembershipRules.checkRemovable(view(1, 1), "n1")).hasMessage("removing n1 would leave 0 "
                + "voter(s), fewer than a majority (1) of the 1 voters now; add a member first");
        assertThatCode(() -> MembershipRules.checkRemovable(view(4, 0), "n4")).as("4 → 3, majority of 4 is 3")
                .doesNotThrowAnyException();
    }

    @Test
    void aListenerCanAlwaysGoAndAnUnknownIdIsNamedWithTheMembers() {
        assertThatCode(() -> MembershipRules.checkRemovable(view(1, 1), "l1")).doesNotThrowAnyException();
        refused(() -> MembershipRules.checkRemovable(view(2, 1), "n7"))
                .hasMessage("node n7 is not a member (members: n1 LEADER, n2 VOTER, l1 LISTENER)");
    }

    @Test
    void aReplacementNeedsANewIdAndValidAddresses() {
        assertThatCode(() -> MembershipRules.checkReplacement("n2", "n2b", "h:1", "h:2")).doesNotThrowAnyException();
        refused(() -> MembershipRules.checkReplacement("n2", "n2", "h:1", "h:2"))
                .hasMessage("the new incarnation needs a new id: n2 is the id being replaced");
        refused(() -> MembershipRules.checkReplacement("n2", "bad id", "h:1", "h:2"))
                .hasMessageStartingWith("invalid node id 'bad id'");
        refused(() -> MembershipRules.checkReplacement("n2", "n5", "h:1", "h"))
                .hasMessage("invalid client-address 'h': must be host:port");
    }

    @Test
    void leadershipGoesToTheVoterWithTheHighestCommitIndexNeverAListener() {
        MemberView v = view(3, 1); // commit indexes: n1 99, n2 98, n3 97; the listener l1 500
        assertThat(MembershipRules.handoverTarget(v, "n1")).isEqualTo("n2");
        assertThat(MembershipRules.handoverTarget(v, "n2")).isEqualTo("n1");
        refused(() -> MembershipRules.handoverTarget(view(1, 1), "n1"))
                .hasMessage("no other voter to hand leadership to");
    }
}
