package dev.leasehold.store;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The value of {@code leasehold.recovery-grace}: how long after start-up no key is granted, so
 * that leases handed out before a crash or restart have surely run out (PROTOCOL.md section 8).
 *
 * <ul>
 * <li>{@code auto} (default): {@code min(255 s, stored lease horizon − now)}; the full 255 s if
 * the horizon file is missing or unreadable. Trusts the wall clock not to step forward across the
 * restart by more than the horizon's slack (5 s).
 * <li>a duration from {@code 1ms} to {@code 255s}: exactly that, whatever the horizon says.
 * {@code 255s} is always safe (no lease is longer) and does not depend on the wall clock.
 * <li>{@code 0s}: off. Grants start at once; a lease of the previous run may still be in use,
 * so a key can have two holders right after a restart. Only for users who accept that.
 * </ul>
 *
 * Bound from text by Spring's conversion ({@link #valueOf(String)}), so {@code auto} and
 * {@code 30s} both work in application.yml, environment variables and the Helm chart. The
 * durations read as Spring Boot's own: a number with an optional unit ({@code ns}, {@code us},
 * {@code ms}, {@code s}, {@code m}, {@code h}, {@code d}; none means milliseconds) or ISO-8601;
 * parsed here because this package does not depend on Spring.
 */
public record RecoveryGrace(Duration fixed) {

    private static final Pattern SIMPLE = Pattern.compile("^([+-]?\\d+)([a-zA-Z]{0,2})$");
    private static final Pattern ISO_8601 = Pattern.compile("^[+-]?[pP].*$");
    private static final Map<String, ChronoUnit> UNITS = Map.of("ns", ChronoUnit.NANOS, "us", ChronoUnit.MICROS,
            "ms", ChronoUnit.MILLIS, "s", ChronoUnit.SECONDS, "m", ChronoUnit.MINUTES, "h", ChronoUnit.HOURS,
            "d", ChronoUnit.DAYS);
    static final Duration MAX = Duration.ofSeconds(255); // first: the constants below use it
    public static final RecoveryGrace AUTO = new RecoveryGrace(null);
    public static final RecoveryGrace OFF = new RecoveryGrace(Duration.ZERO);

    public RecoveryGrace {
        if (fixed != null && (fixed.isNegative() || fixed.compareTo(MAX) > 0)) {
            throw new IllegalArgumentException("leasehold.recovery-grace must be auto or a duration from 0s to 255s"
                    + " (no lease is longer than 255 s), was " + fixed);
        }
    }

    /** Parses {@code auto} or a duration ({@code 30s}, {@code 1500ms}, {@code PT30S}). */
    public static RecoveryGrace valueOf(String text) {
        String t = text == null ? "" : text.trim();
        if (t.toLowerCase(Locale.ROOT).equals("auto")) {
            return AUTO;
        }
        Duration d;
        try {
            d = parseDuration(t);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("leasehold.recovery-grace must be auto or a duration from 0s to 255s,"
                    + " was '" + text + "'", e);
        }
        return new RecoveryGrace(d);
    }

    /** As Spring Boot's {@code DurationStyle.detectAndParse}: {@code 30s}, {@code 1500} (ms) or {@code PT30S}. */
    private static Duration parseDuration(String text) {
        Matcher simple = SIMPLE.matcher(text);
        if (simple.matches()) {
            String suffix = simple.group(2).toLowerCase(Locale.ROOT);
            ChronoUnit unit = suffix.isEmpty() ? ChronoUnit.MILLIS : UNITS.get(suffix);
            if (unit == null) {
                throw new IllegalArgumentException("Unknown unit '" + simple.group(2) + "'");
            }
            return Duration.of(Long.parseLong(simple.group(1)), unit);
        }
        if (ISO_8601.matcher(text).matches()) {
            try {
                return Duration.parse(text);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("'" + text + "' is not a valid ISO-8601 duration", e);
            }
        }
        throw new IllegalArgumentException("'" + text + "' is not a valid duration");
    }

    public boolean isAuto() {
        return fixed == null;
    }

    public boolean isOff() {
        return fixed != null && fixed.isZero();
    }

    /** The grace to apply, given what {@code auto} would compute from the stored horizon. */
    public Duration resolve(Duration autoGrace) {
        return isAuto() ? autoGrace : fixed;
    }

    @Override
    public String toString() {
        return isAuto() ? "auto" : fixed.toMillis() % 1000 == 0 ? fixed.toSeconds() + "s" : fixed.toMillis() + "ms";
    }
}
