package dev.leasehold.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Compares what a doc says a command prints with what it printed, modulo what changes from run to
 * run. Both sides go through {@link #normalize(String)}, which replaces only values that are
 * never the same twice, each by a named placeholder:
 *
 * <ul>
 * <li>instants ({@code 2026-11-30T11:40:12.345Z}) by {@code <instant>};
 * <li>ports ({@code 127.0.0.1:7420}, {@code localhost:7421}) by {@code <port>}: the test's server runs on free ports;
 * <li>fencing tokens ({@code token 17}, {@code "token":17}) by {@code <token>}; their order is
 * still checked ({@link #tokenOrder}): where the doc shows B's token above A's, so must the run;
 * <li>JSON milliseconds ({@code "valid_until_ms":1796038812345}, {@code "rtt_ms":0.361}) by {@code <ms>};
 * <li>durations ({@code 0.361 ms}, {@code 29.9s}, {@code 2m}) by {@code <duration>};
 * <li>process ids ({@code pid 4242}) by {@code <pid>}.
 * </ul>
 *
 * Everything else is compared as is: words, keys, exit codes ({@code 65}), lease seconds
 * ({@code "lease_s":30}). A doc line may elide with {@code ...}, which matches any text (the rest
 * of an error message, a long JSON object). The line counts must be equal: a new line of output
 * (a warning, say) is drift too.
 */
final class DocOutput {

    private static final Pattern INSTANT = Pattern.compile("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");
    private static final Pattern PORT = Pattern.compile("((?:\\d{1,3}\\.){3}\\d{1,3}|localhost|\\[::1\\]):\\d{1,5}\\b");
    private static final Pattern TOKEN = Pattern.compile("(\\btoken |\"token\":)(\\d+)");
    private static final Pattern JSON_MS = Pattern.compile("(\"\\w+_ms\":)\\d+(\\.\\d+)?");
    private static final Pattern DURATION = Pattern.compile("\\b\\d+(\\.\\d+)?\\s?(ms|s|m|h)\\b");
    private static final Pattern PID = Pattern.compile("\\bpid \\d+");

    private DocOutput() {
    }

    /** {@code line} with its run-dependent values replaced by placeholders (see the class comment). */
    static String normalize(String line) {
        String s = INSTANT.matcher(line).replaceAll("<instant>");
        s = PORT.matcher(s).replaceAll("$1:<port>");
        s = TOKEN.matcher(s).replaceAll("$1<token>");
        s = JSON_MS.matcher(s).replaceAll("$1<ms>");
        s = DURATION.matcher(s).replaceAll("<duration>");
        s = PID.matcher(s).replaceAll("pid <pid>");
        return s.stripTrailing();
    }

    /** The fencing tokens {@code text} shows, in order. */
    static List<Long> tokens(List<String> text) {
        List<Long> tokens = new ArrayList<>();
        for (String line : text) {
            Matcher m = TOKEN.matcher(line);
            while (m.find()) {
                tokens.add(Long.parseUnsignedLong(m.group(2)));
            }
        }
        return tokens;
    }

    /**
     * Null if the tokens {@code actual} shows stand in the same order as the doc's (for every pair:
     * smaller, equal or larger alike), else what differs.
     */
    static String tokenOrder(List<Long> doc, List<Long> actual) {
        if (doc.size() != actual.size()) {
            return "the doc shows " + doc.size() + " tokens " + doc + ", the run " + actual.size() + " " + actual;
        }
        for (int i = 0; i < doc.size(); i++) {
            for (int j = i + 1; j < doc.size(); j++) {
                if (Long.signum(Long.compareUnsigned(doc.get(j), doc.get(i)))
                        != Long.signum(Long.compareUnsigned(actual.get(j), actual.get(i)))) {
                    return "the doc's tokens " + doc + " and the run's " + actual + " are not in the same order"
                            + " (token " + (i + 1) + " against token " + (j + 1) + ")";
                }
            }
        }
        return null;
    }

    /**
     * Null if {@code actual} (the lines printed) matches what the doc shows, else the first
     * difference in words.
     */
    static String compare(List<String> expected, List<String> actual) {
        List<String> want = expected.stream().map(DocOutput::normalize).toList();
        List<String> got = trimTrailingBlank(actual.stream().map(DocOutput::normalize).toList());
        want = trimTrailingBlank(want);
        for (int i = 0; i < Math.max(want.size(), got.size()); i++) {
            if (i >= want.size()) {
                return "line " + (i + 1) + " is more than the doc shows: \"" + got.get(i) + "\"";
            }
            if (i >= got.size()) {
                return "line " + (i + 1) + " is missing: the doc shows \"" + want.get(i) + "\"";
            }
            if (!matches(want.get(i), got.get(i))) {
                return "line " + (i + 1) + " differs (normalized): the doc shows \"" + want.get(i) + "\", the run printed \""
                        + got.get(i) + "\"";
            }
        }
        return tokenOrder(tokens(expected), tokens(actual));
    }

    /** An expected line against an actual one, both normalized; {@code ...} in the expected matches any text. */
    static boolean matches(String expected, String actual) {
        if (!expected.contains("...")) {
            return expected.equals(actual);
        }
        String regex = List.of(expected.split("\\.\\.\\.", -1)).stream().map(Pattern::quote)
                .collect(Collectors.joining(".*"));
        return Pattern.compile(regex, Pattern.DOTALL).matcher(actual).matches();
    }

    private static List<String> trimTrailingBlank(List<String> lines) {
        int end = lines.size();
        while (end > 0 && lines.get(end - 1).isBlank()) {
            end--;
        }
        return lines.subList(0, end);
    }
}
