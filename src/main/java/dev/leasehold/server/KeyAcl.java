package dev.leasehold.server;

import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import javax.security.auth.x500.X500Principal;

import dev.leasehold.protocol.Keys;

/**
 * Which keys a mutual-TLS client may use: a map from client <em>identities</em> to the key
 * prefixes they may name in Acquire, Release and Extend. Ping needs no permission.
 *
 * <p>An identity is typed, so a value can never match in the wrong field of a certificate:
 * <ul>
 * <li>{@code subject:<DN>} the certificate's subject, compared in canonical form (so
 *     {@code CN=orders, O=Example} equals {@code cn=orders,o=example});
 * <li>{@code dns:<name>} a DNS subject alternative name, case-insensitive;
 * <li>{@code uri:<uri>} a URI SAN, e.g. a SPIFFE ID {@code uri:spiffe://cluster.local/ns/a/sa/b};
 * <li>{@code email:<address>} an rfc822Name SAN;
 * <li>{@code ip:<address>} an IP address SAN (literal, v4 or v6).
 * </ul>
 * A client matching several identities may use the union of their prefixes. Prefixes are
 * compared byte for byte on the UTF-8 key, like keys themselves; the empty prefix allows every
 * key. A client whose certificate matches no identity, or that sent no certificate, may use no
 * key at all.
 *
 * <p>Immutable and thread-safe. Each session resolves its {@link Grant} once, from the peer
 * certificate of its TLS handshake.
 */
public final class KeyAcl {

    private enum Type { SUBJECT, DNS, URI, EMAIL, IP }

    private record Identity(Type type, String value, String text) {
    }

    private record Entry(Identity identity, List<byte[]> prefixes, List<String> prefixTexts) {
    }

    private final List<Entry> entries;

    private KeyAcl(List<Entry> entries) {
        this.entries = entries;
    }

    /**
     * Parses identity → prefixes entries.
     *
     * @throws IllegalArgumentException naming the offending identity: no or unknown type, a
     *         malformed DN or IP literal, a null prefix or list
     */
    public static KeyAcl of(Map<String, ? extends Collection<String>> acl) {
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<String, ? extends Collection<String>> e : acl.entrySet()) {
            Identity id = parse(e.getKey());
            if (e.getValue() == null) {
                throw new IllegalArgumentException("identity '" + e.getKey() + "' has no list of key prefixes");
            }
            List<byte[]> prefixes = new ArrayList<>();
            List<String> texts = new ArrayList<>();
            for (String p : e.getValue()) {
                if (p == null || p.indexOf('\n') >= 0) {
                    throw new IllegalArgumentException("identity '" + e.getKey() + "' has a null prefix or one with a newline");
                }
                prefixes.add(p.getBytes(StandardCharsets.UTF_8));
                texts.add(p);
            }
            entries.add(new Entry(id, List.copyOf(prefixes), List.copyOf(texts)));
        }
        return new KeyAcl(List.copyOf(entries));
    }

    /** Checks one identity's syntax; the message says what is wrong. */
    public static void checkIdentity(String identity) {
        parse(identity);
    }

    private static Identity parse(String text) {
        int colon = text == null ? -1 : text.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("identity '" + text + "' needs a type: subject:<DN>, dns:<name>, "
                    + "uri:<uri>, email:<address> or ip:<address> (in YAML, write the map key in brackets, "
                    + "e.g. \"[subject:CN=orders,O=Example]\", or Spring Boot drops the ':', '=' and ',')");
        }
        String kind = text.substring(0, colon).toLowerCase(Locale.ROOT);
        String value = text.substring(colon + 1).strip();
        if (value.isEmpty()) {
            throw new IllegalArgumentException("identity '" + text + "' has an empty value");
        }
        return switch (kind) {
            case "subject" -> {
                try {
                    yield new Identity(Type.SUBJECT, canonicalDn(value), text);
                } catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException("identity '" + text + "' is not a valid X.500 name: "
                            + ex.getMessage(), ex);
                }
            }
            case "dns" -> new Identity(Type.DNS, value.toLowerCase(Locale.ROOT), text);
            case "uri" -> new Identity(Type.URI, value, text);
            case "email" -> new Identity(Type.EMAIL, value, text);
            case "ip" -> {
                if (!value.matches("[0-9A-Fa-f:.]+")) {
                    throw new IllegalArgumentException("identity '" + text + "' is not an IP address literal");
                }
                yield new Identity(Type.IP, canonicalIp(value), text);
            }
            default -> throw new IllegalArgumentException("identity '" + text + "' has unknown type '" + kind
                    + "': use subject, dns, uri, email or ip");
        };
    }

    private static String canonicalDn(String dn) {
        return new X500Principal(dn).getName(X500Principal.CANONICAL);
    }

    private static String canonicalIp(String literal) {
        try {
            return java.net.InetAddress.getByName(literal).getHostAddress(); // a literal: no lookup
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("'" + literal + "' is not an IP address literal", e);
        }
    }

    /**
     * What the holder of {@code certificate} may do; {@code null} (no client certificate) gets
     * an empty grant.
     */
    public Grant grantFor(X509Certificate certificate) {
        if (certificate == null) {
            return new Grant("no client certificate", List.of(), List.of(), List.of());
        }
        Set<String> names = new LinkedHashSet<>();
        String subject = certificate.getSubjectX500Principal().getName(X500Principal.CANONICAL);
        Map<Type, List<String>> sans = subjectAltNames(certificate);
        List<String> matched = new ArrayList<>();
        List<byte[]> prefixes = new ArrayList<>();
        List<String> prefixTexts = new ArrayList<>();
        for (Entry e : entries) {
            Identity id = e.identity();
            boolean match = id.type() == Type.SUBJECT ? id.value().equals(subject)
                    : sans.getOrDefault(id.type(), List.of()).contains(id.value());
            if (match) {
                matched.add(id.text());
                prefixes.addAll(e.prefixes());
                prefixTexts.addAll(e.prefixTexts());
            }
        }
        names.add("subject:" + certificate.getSubjectX500Principal().getName());
        sans.forEach((type, values) -> values.forEach(v -> names.add(type.name().toLowerCase(Locale.ROOT) + ":" + v)));
        return new Grant(String.join(", ", names), List.copyOf(matched), List.copyOf(prefixes),
                List.copyOf(prefixTexts));
    }

    private static Map<Type, List<String>> subjectAltNames(X509Certificate cert) {
        Map<Type, List<String>> out = new LinkedHashMap<>();
        Collection<List<?>> sans;
        try {
            sans = cert.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return out;
        }
        if (sans == null) {
            return out;
        }
        for (List<?> san : sans) {
            if (san.size() < 2 || !(san.get(0) instanceof Integer kind) || !(san.get(1) instanceof String value)) {
                continue;
            }
            Type type;
            String v = value;
            switch (kind) {
                case 1 -> type = Type.EMAIL;
                case 2 -> {
                    type = Type.DNS;
                    v = value.toLowerCase(Locale.ROOT);
                }
                case 6 -> type = Type.URI;
                case 7 -> {
                    type = Type.IP;
                    try {
                        v = canonicalIp(value);
                    } catch (IllegalArgumentException e) {
                        continue;
                    }
                }
                default -> {
                    continue;
                }
            }
            out.computeIfAbsent(type, t -> new ArrayList<>()).add(v);
        }
        return out;
    }

    /**
     * One session's permission: the key prefixes of every identity its certificate matched.
     *
     * @param certificate the client's names as presented (for logs), or why there are none
     * @param identities the configured identities it matched
     */
    public record Grant(String certificate, List<String> identities, List<byte[]> prefixes,
            List<String> prefixTexts) {

        /** True if {@code key} starts with one of the granted prefixes (byte for byte). */
        public boolean allows(byte[] key) {
            for (byte[] p : prefixes) {
                if (startsWith(key, p)) {
                    return true;
                }
            }
            return false;
        }

        private static boolean startsWith(byte[] key, byte[] prefix) {
            if (prefix.length > key.length) {
                return false;
            }
            for (int i = 0; i < prefix.length; i++) {
                if (key[i] != prefix[i]) {
                    return false;
                }
            }
            return true;
        }

        /** For a log line: the certificate's names, matched identities and prefixes, all escaped. */
        public String describe() {
            List<String> ps = new ArrayList<>();
            prefixTexts.forEach(p -> ps.add(Keys.printable(p.getBytes(StandardCharsets.UTF_8))));
            List<String> ids = new ArrayList<>();
            identities.forEach(i -> ids.add(escape(i)));
            return "client [" + escape(certificate) + "], matched ACL identities " + ids + ", allowed prefixes " + ps;
        }

        /** Escapes control characters (a certificate name could carry any), cut at 300 chars. */
        private static String escape(String s) {
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < s.length(); i++) {
                if (out.length() > 300) {
                    return out.append("...").toString();
                }
                char c = s.charAt(i);
                if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == '\u2028' || c == '\u2029') {
                    out.append(String.format("\\u%04X", (int) c));
                } else {
                    out.append(c);
                }
            }
            return out.toString();
        }
    }
}
