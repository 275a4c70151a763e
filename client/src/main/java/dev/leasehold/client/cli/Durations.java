package dev.leasehold.client.cli;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations on the command line: a whole number with a unit, {@code 500ms}, {@code 30s},
 * {@code 2m}; a bare number is seconds.
 */
final class Durations {

    private static final Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m)?");

    private Durations() {
    }

    /** The duration in milliseconds, or a UsageException naming the option. */
    static long millis(String option, String text) throws UsageException {
        Matcher m = DURATION.matcher(text);
        if (!m.matches()) {
            throw new UsageException("bad duration for " + option + ": '" + text + "' (use e.g. 500ms, 30s, 2m)");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        switch (unit) {
            case "ms":
                return n;
            case "m":
                return n * 60_000L;
            default:
                return n * 1000L;
        }
    }

    /** A whole number of seconds from {@code min} to {@code max}, as the wire needs. */
    static int seconds(String option, String text, int min, int max) throws UsageException {
        long ms = millis(option, text);
        if (ms % 1000 != 0) {
            throw new UsageException(option + " must be whole seconds, not '" + text + "'");
        }
        long s = ms / 1000;
        if (s < min || s > max) {
            throw new UsageException(option + " must be " + min + "s to " + max + "s, not '" + text + "'");
        }
        return (int) s;
    }

    /** {@code 1.5s}, {@code 250ms}: for messages. */
    static String format(long millis) {
        if (millis % 1000 == 0) {
            return millis / 1000 + "s";
        }
        if (millis > 1000) {
            return String.format(java.util.Locale.ROOT, "%.1fs", millis / 1000.0);
        }
        return millis + "ms";
    }
}
