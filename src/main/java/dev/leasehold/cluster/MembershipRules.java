package dev.leasehold.cluster;

import java.util.ArrayList;
import java.util.List;

import dev.leasehold.cluster.MemberView.Member;
import dev.leasehold.cluster.MemberView.Role;

/**
 * The rules a membership change is refused by, decided on values before anything is changed
 * (docs/cluster.md "Changing members"): each throws a {@link MembershipException} of kind
 * {@code REFUSED} whose message says what to do instead.
 */
final class MembershipRules {

    private MembershipRules() {
    }

    /** A node id: 1-64 letters, digits, {@code -} or {@code _}. */
    static void checkId(String id) {
        if (id == null || !id.matches("[A-Za-z0-9_-]{1,64}")) {
            throw refused("invalid node id '" + id + "': 1-64 letters, digits, '-' or '_'");
        }
    }

    /** {@code host:port} with a port from 1 to 65535; {@code what} names the option in the message. */
    static void checkHostPort(String what, String hostPort) {
        int colon = hostPort == null ? -1 : hostPort.lastIndexOf(':');
        boolean ok = colon > 0;
        if (ok) {
            try {
                int port = Integer.parseInt(hostPort.substring(colon + 1));
                ok = port > 0 && port < 65536;
            } catch (NumberFormatException e) {
                ok = false;
            }
        }
        if (!ok) {
            throw refused("invalid " + what + " '" + hostPort + "': must be host:port");
        }
    }

    /** A certificate identity, when given: {@code dns:}, {@code ip:} or {@code uri:} and a value. */
    static void checkIdentity(String identity) {
        if (identity != null && !identity.isEmpty() && !identity.matches("(dns|ip|uri):.+")) {
            throw refused("invalid identity '" + identity + "': dns:<name>, ip:<address> or uri:<uri>");
        }
    }

    /**
     * A node may be added only under an id that is no member now and never was one: a node never
     * comes back under a former member's id (it may have voted on a log it no longer has).
     *
     * @param stored the roster records that {@code id} stored the log
     * @param removed the roster records that {@code id} was removed
     */
    static void checkAddable(MemberView before, String id, boolean stored, boolean removed) {
        if (before.member(id) != null) {
            throw refused("node " + id + " is already a member (" + before.member(id).role() + ")");
        }
        if (stored || removed) {
            throw refused("id " + id + " was a member of this cluster before (it " + (removed
                    ? "was removed" : "stored the log") + "): a node never comes back under a former member's id. "
                    + "Start the new node with a new leasehold.cluster.node-id and add that "
                    + "(docs/cluster.md, \"Replacing a lost node\")");
        }
    }

    /**
     * A member may be removed unless it is a voter whose removal would leave fewer voters than a
     * majority of the voters now (the majority floor); a listener may always go.
     */
    static void checkRemovable(MemberView before, String id) {
        Member m = before.member(id);
        if (m == null) {
            throw refused("node " + id + " is not a member (members: " + ids(before) + ")");
        }
        boolean voter = m.role() != Role.LISTENER;
        long votersBefore = before.voters();
        if (voter && votersBefore - 1 < votersBefore / 2 + 1) {
            throw refused("removing " + id + " would leave " + (votersBefore - 1) + " voter(s), fewer than a majority ("
                    + (votersBefore / 2 + 1) + ") of the " + votersBefore + " voters now; add a member first");
        }
    }

    /** A replacement: both ids valid, a new id for the new incarnation, and its two addresses. */
    static void checkReplacement(String oldId, String newId, String raftAddress, String clientAddress) {
        checkId(oldId);
        checkId(newId);
        if (oldId.equals(newId)) {
            throw refused("the new incarnation needs a new id: " + newId + " is the id being replaced");
        }
        checkHostPort("raft-address", raftAddress);
        checkHostPort("client-address", clientAddress);
    }

    /** The voter to hand leadership to: the one with the highest commit index, other than {@code leaving}. */
    static String handoverTarget(MemberView v, String leaving) {
        Member best = null;
        for (Member m : v.members()) {
            if (!m.id().equals(leaving) && m.role() != Role.LISTENER
                    && (best == null || m.commitIndex() > best.commitIndex())) {
                best = m;
            }
        }
        if (best == null) {
            throw refused("no other voter to hand leadership to");
        }
        return best.id();
    }

    /** The members as {@code id ROLE, ...}, for messages. */
    static String ids(MemberView v) {
        List<String> out = new ArrayList<>();
        v.members().forEach(m -> out.add(m.id() + " " + m.role()));
        return String.join(", ", out);
    }

    static MembershipException refused(String message) {
        return new MembershipException(MembershipException.Kind.REFUSED, message, false);
    }
}
