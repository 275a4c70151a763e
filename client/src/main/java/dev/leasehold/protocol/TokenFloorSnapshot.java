package dev.leasehold.protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A token-floor snapshot (docs/cluster.md "Backup and restore of the token floor"): what a new
 * node or cluster needs so that it never issues a token a fenced resource has already seen. The
 * file {@code leasehold admin snapshot save} writes and {@code leasehold.restore-from} reads;
 * shared by the server (which takes it) and the command line (which checks it before writing it).
 *
 * <p>A small UTF-8 text, one {@code name value} per line, in this order, the last line the
 * SHA-256 of every byte before it:
 * <pre>
 * leasehold-token-floor-snapshot 1
 * mode cluster
 * node n1
 * taken-at 2026-12-07T16:03:10.123Z
 * term 3
 * index 1234
 * token-floor 1000123
 * roster n1,n2,n3
 * sha256 4f1c...
 * </pre>
 *
 * @param mode {@code cluster} or {@code single}
 * @param node the node that took it (in a cluster the serving leader), {@code single} for a single node
 * @param takenAt when it was taken, by the taking node's wall clock (for people: nothing decides by it)
 * @param term the Raft term it was taken in (0 on a single node)
 * @param index the committed and applied log index it was read at (0 on a single node)
 * @param tokenFloor every token issued or reserved so far, in any mode, is at most this
 * @param roster the cluster's voters then (empty on a single node)
 */
public record TokenFloorSnapshot(String mode, String node, Instant takenAt, long term, long index, long tokenFloor,
        List<String> roster) {

    /** The first line: the format's name and the one version this build reads and writes. */
    public static final String HEADER = "leasehold-token-floor-snapshot 1";
    private static final List<String> FIELDS = List.of("mode", "node", "taken-at", "term", "index", "token-floor",
            "roster");

    /** Checks the fields. */
    public TokenFloorSnapshot {
        if (!"cluster".equals(mode) && !"single".equals(mode)) {
            throw new IllegalArgumentException("mode must be cluster or single, not " + mode);
        }
        if (node == null || node.isBlank() || node.contains("\n") || tokenFloor < 0 || term < 0 || index < 0) {
            throw new IllegalArgumentException("bad snapshot fields");
        }
        roster = List.copyOf(roster);
    }

    /** The file's text, checksum last. */
    public String encode() {
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        b.append("mode ").append(mode).append('\n');
        b.append("node ").append(node).append('\n');
        b.append("taken-at ").append(takenAt).append('\n');
        b.append("term ").append(term).append('\n');
        b.append("index ").append(index).append('\n');
        b.append("token-floor ").append(tokenFloor).append('\n');
        b.append("roster ").append(String.join(",", roster)).append('\n');
        return b + "sha256 " + sha256(b.toString()) + "\n";
    }

    /**
     * Reads and verifies a snapshot's text.
     *
     * @throws IllegalArgumentException saying what is wrong: not a snapshot, another version,
     *         truncated, a checksum that does not match, a bad field
     */
    public static TokenFloorSnapshot decode(String text) {
        if (!text.startsWith("leasehold-token-floor-snapshot ")) {
            throw new IllegalArgumentException("not a Leasehold token-floor snapshot (it does not start with '"
                    + HEADER + "')");
        }
        if (!text.startsWith(HEADER + "\n")) {
            throw new IllegalArgumentException("a snapshot of another format version ("
                    + text.lines().findFirst().orElse("") + "); this build reads '" + HEADER + "'");
        }
        int sum = text.lastIndexOf("\nsha256 ");
        if (sum < 0 || !text.endsWith("\n")) {
            throw new IllegalArgumentException("truncated: the snapshot does not end with its sha256 line");
        }
        String body = text.substring(0, sum + 1);
        String expected = text.substring(sum + "\nsha256 ".length(), text.length() - 1);
        if (!expected.equals(sha256(body))) {
            throw new IllegalArgumentException("corrupt: its sha256 does not match its content (changed or damaged "
                    + "after it was saved)");
        }
        List<String> lines = body.lines().toList();
        if (lines.size() != FIELDS.size() + 1) {
            throw new IllegalArgumentException("expected " + FIELDS.size() + " fields, found " + (lines.size() - 1));
        }
        List<String> values = new ArrayList<>();
        for (int i = 0; i < FIELDS.size(); i++) {
            String line = lines.get(i + 1);
            String prefix = FIELDS.get(i) + " ";
            if (!line.startsWith(prefix) && !line.equals(FIELDS.get(i))) {
                throw new IllegalArgumentException("line " + (i + 2) + " should be '" + FIELDS.get(i) + " ...'");
            }
            values.add(line.length() > prefix.length() ? line.substring(prefix.length()) : "");
        }
        try {
            String roster = values.get(6);
            return new TokenFloorSnapshot(values.get(0), values.get(1), Instant.parse(values.get(2)),
                    Long.parseLong(values.get(3)), Long.parseLong(values.get(4)), Long.parseLong(values.get(5)),
                    roster.isEmpty() ? List.of() : List.of(roster.split(",")));
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException("a field cannot be read: " + e.getMessage(), e);
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
