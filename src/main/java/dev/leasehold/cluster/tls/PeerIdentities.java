package dev.leasehold.cluster.tls;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.leasehold.cluster.ClusterSettings;
import dev.leasehold.settings.SettingException;

/**
 * Which configured member a peer certificate names. With cluster TLS a chain from the cluster's CA
 * is not enough: the leaf must also name one of {@code leasehold.cluster.peers}, so a client
 * certificate from the same CA (or one issued for another service) cannot pose as a member.
 *
 * <h2>Rules</h2>
 * <ul>
 * <li>A member with an explicit {@code identity} ({@code dns:<name>}, {@code ip:<address>} or
 *     {@code uri:<uri>}) is named only by a subject alternative name of that type and value
 *     (DNS case-insensitive, IP compared as an address, URI exactly).
 * <li>Otherwise a member is named by a DNS SAN equal (case-insensitive) to the host of its
 *     {@code raft-address}, or, when that host is an IP literal, by an IP SAN equal to it.
 * <li>Wildcard DNS SANs ({@code *.peers.ns.svc}) name no member: a wildcard also covers names
 *     that are not members. The subject CN is never used (as in RFC 6125 hostname checks).
 * </ul>
 * The check says "this connection comes from a member"; it does not bind the certificate to the
 * peer id Ratis reads from the request (docs/security.md: a member's stolen key is that member).
 * Immutable and thread-safe: handshakes on every event loop share one.
 */
public final class PeerIdentities {

    /** SAN types of RFC 5280 as the JDK numbers them. */
    private static final int SAN_DNS = 2;
    private static final int SAN_URI = 6;
    private static final int SAN_IP = 7;

    /** What names one member: a SAN type and its normalised value. */
    record Name(int type, String value) {
        @Override
        public String toString() {
            return (type == SAN_DNS ? "dns:" : type == SAN_IP ? "ip:" : "uri:") + value;
        }
    }

    private final Map<String, Name> byMember;

    private PeerIdentities(Map<String, Name> byMember) {
        this.byMember = byMember;
    }

    /**
     * The identities of every configured peer.
     *
     * @throws SettingException naming the peer whose identity is not {@code dns:}, {@code ip:} or {@code uri:}
     */
    public static PeerIdentities of(Map<String, ClusterSettings.Peer> peers) {
        Map<String, Name> names = new LinkedHashMap<>();
        peers.forEach((id, p) -> names.put(id, p.identity() != null ? parse(id, p.identity()) : fromHost(p.raftHost())));
        refuseShared(names, peers);
        return new PeerIdentities(names);
    }

    /**
     * Members that share an identity cannot be told apart: a certificate naming it names each of
     * them, so a node's own certificate is taken for the first of them. The usual case is several
     * nodes on one host (every raft-address 127.0.0.1): the start fails here with the fix, rather
     * than later with "does not name node n2: its peers expect ip:127.0.0.1".
     *
     * @throws IllegalArgumentException naming the members, the shared identity and the fix
     */
    private static void refuseShared(Map<String, Name> names, Map<String, ClusterSettings.Peer> peers) {
        Map<Name, List<String>> byName = new LinkedHashMap<>();
        new java.util.TreeMap<>(names).forEach((id, n) -> byName.computeIfAbsent(n, k -> new ArrayList<>()).add(id));
        List<String> problems = new ArrayList<>();
        byName.forEach((name, ids) -> {
            if (ids.size() > 1) {
                boolean fromHost = ids.stream().allMatch(id -> peers.get(id).identity() == null);
                problems.add("members " + String.join(", ", ids) + " share the peer identity " + name
                        + (fromHost ? " (the host of their leasehold.cluster.peers.<id>.raft-address; for example "
                        + "several nodes on one host)" : " (their leasehold.cluster.peers.<id>.identity)"));
            }
        });
        if (!problems.isEmpty()) {
            List<String> all = new ArrayList<>(new java.util.TreeSet<>(names.keySet()));
            String example = all.stream().map(id -> "leasehold.cluster.peers." + id + ".identity=uri:spiffe://<domain>/" + id)
                    .reduce((a, b) -> a + ", " + b).orElse("");
            throw new IllegalArgumentException("Cluster TLS cannot tell the members apart: " + String.join("; ", problems)
                    + ". A certificate naming that identity names each of them, so a node would take its own "
                    + "certificate for another member's. Give each member an identity of its own, "
                    + "leasehold.cluster.peers.<id>.identity (uri:, dns: or ip:), e.g. " + example
                    + ", and put it in that node's certificate as a SAN (docs/security.md, \"The Raft port\")");
        }
    }

    /**
     * These identities and the members added online ({@code id → peer}: named by its
     * {@code identity} when the add gave one, else by its Raft address's host, as a configured
     * peer). A configured peer keeps its configured name. Ids in {@code removed} are members no
     * more, configured or not: their certificates are refused.
     */
    public PeerIdentities with(Map<String, ClusterSettings.Peer> added, Set<String> removed) {
        Map<String, Name> names = new LinkedHashMap<>(byMember);
        names.keySet().removeAll(removed);
        added.forEach((id, p) -> names.putIfAbsent(id, p.identity() != null && !p.identity().isEmpty()
                ? parse(id, p.identity()) : fromHost(p.raftHost())));
        names.keySet().removeAll(removed);
        return new PeerIdentities(names);
    }

    private static Name parse(String id, String identity) {
        int colon = identity.indexOf(':');
        String type = colon < 0 ? "" : identity.substring(0, colon);
        String value = colon < 0 ? "" : identity.substring(colon + 1);
        if (value.isEmpty()) {
            throw invalid(id, identity);
        }
        return switch (type) {
            case "dns" -> new Name(SAN_DNS, value.toLowerCase(Locale.ROOT));
            case "uri" -> new Name(SAN_URI, value);
            case "ip" -> {
                String ip = ipLiteral(value);
                if (ip == null) {
                    throw invalid(id, identity);
                }
                yield new Name(SAN_IP, ip);
            }
            default -> throw invalid(id, identity);
        };
    }

    private static SettingException invalid(String id, String identity) {
        return new SettingException("leasehold.cluster.peers." + id + ".identity", identity,
                "must be dns:<name>, ip:<address> or uri:<uri>");
    }

    private static Name fromHost(String host) {
        String ip = ipLiteral(host);
        return ip != null ? new Name(SAN_IP, ip) : new Name(SAN_DNS, host.toLowerCase(Locale.ROOT));
    }

    /** The canonical text of an IP literal, or null if {@code s} is not one (never a DNS lookup). */
    static String ipLiteral(String s) {
        boolean v4 = s.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        boolean v6 = s.indexOf(':') >= 0 && s.matches("[0-9A-Fa-f:.]+");
        if (!v4 && !v6) {
            return null;
        }
        try {
            return InetAddress.getByName(s).getHostAddress(); // a literal: parsed, not resolved
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** The member id that {@code leaf} names, or null if it names none. */
    public String memberNamedBy(X509Certificate leaf) {
        List<Name> sans = sans(leaf);
        for (Map.Entry<String, Name> e : byMember.entrySet()) {
            if (sans.contains(e.getValue())) {
                return e.getKey();
            }
        }
        return null;
    }

    /** What the member {@code id} must be named by, for messages ("dns:leasehold-0.peers..."). */
    public String expected(String id) {
        Name n = byMember.get(id);
        return n == null ? "(not a member)" : n.toString();
    }

    /** Every member's expected name, for messages. */
    public Map<String, String> expected() {
        Map<String, String> out = new LinkedHashMap<>();
        byMember.forEach((id, n) -> out.put(id, n.toString()));
        return out;
    }

    /** The leaf's SANs of the three types we match, normalised; wildcard DNS names left out. */
    static List<Name> sans(X509Certificate leaf) {
        List<Name> out = new ArrayList<>();
        Collection<List<?>> all;
        try {
            all = leaf.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return out; // an unparsable SAN extension names nobody
        }
        if (all == null) {
            return out;
        }
        for (List<?> san : all) {
            if (san.size() < 2 || !(san.get(0) instanceof Integer type) || !(san.get(1) instanceof String value)) {
                continue;
            }
            switch (type) {
                case SAN_DNS -> {
                    if (!value.contains("*")) {
                        out.add(new Name(SAN_DNS, value.toLowerCase(Locale.ROOT)));
                    }
                }
                case SAN_URI -> out.add(new Name(SAN_URI, value));
                case SAN_IP -> {
                    String ip = ipLiteral(value);
                    if (ip != null) {
                        out.add(new Name(SAN_IP, ip));
                    }
                }
                default -> {
                    // other SAN types (email, directory name) name no member
                }
            }
        }
        return out;
    }

    /** The leaf's SANs as text, for log lines and refusals ("dns:a, ip:10.0.0.1"). */
    public static String describe(X509Certificate leaf) {
        List<Name> sans = sans(leaf);
        return sans.isEmpty() ? "no DNS, IP or URI SAN" : String.join(", ", Arrays.stream(sans.toArray(Name[]::new))
                .map(Name::toString).toList());
    }
}
