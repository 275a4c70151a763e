package dev.leasehold.config;

import java.time.Duration;
import java.util.Locale;

import org.springframework.boot.convert.DurationStyle;

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
 * {@code 30s} both work in application.yml, environment variables and the Helm chart.
 */
public record RecoveryGrace(Duration fixed) {

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
            d = DurationStyle.detectAndParse(t);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("leasehold.recovery-grace must be auto or a duration from 0s to 255s,"
                    + " was '" + text + "'", e);
        }
        return new RecoveryGrace(d);
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
