package dev.leasehold.settings;

/**
 * A {@code leasehold.*} setting whose value this start cannot use. Start-up stops with it, and
 * the failure analyzer reports it from these fields (the property, its value, what to do), so
 * the wording of the message is for people, not a format the analyzer parses.
 *
 * <p>The message of an invalid value reads {@code Invalid <property> = <value>: <rule>}, the
 * form docs/configuration.md shows. It is an {@link IllegalArgumentException}: the value, not the
 * server's state, is at fault, and code that refused a value before this type existed threw one.
 */
public class SettingException extends IllegalArgumentException {

    private final String property;
    private final String value;
    private final String action;

    /**
     * An invalid value.
     *
     * @param property the full name, e.g. {@code leasehold.cluster.initial-token}
     * @param value the value as bound (its {@code toString})
     * @param rule what the value must be, or why it cannot serve; the message ends with it
     */
    public SettingException(String property, Object value, String rule) {
        this(property, value, rule, null);
    }

    /**
     * An invalid value, found by a failure of its own (an unreadable file, a TLS error).
     *
     * @param property the full name, e.g. {@code leasehold.tls.bundle}
     * @param value the value as bound (its {@code toString})
     * @param rule what the value must be, or why it cannot serve; the message ends with it
     * @param cause what found it, or null
     */
    public SettingException(String property, Object value, String rule, Throwable cause) {
        this("Invalid " + property + " = " + value + ": " + rule, property, value, null, cause);
    }

    private SettingException(String message, String property, Object value, String action, Throwable cause) {
        super(message, cause);
        this.property = property;
        this.value = String.valueOf(value);
        this.action = action;
    }

    /**
     * A valid value that this host cannot use now (a port another process holds): not
     * "invalid", so the message says what happened, and the action what to do about it.
     *
     * @param property the full name, e.g. {@code leasehold.port}
     * @param value the value that could not be used
     * @param message what happened, naming the property
     * @param action what the operator can do: shown as the report's "Action"
     * @param cause the failure, or null
     * @return the exception to throw
     */
    public static SettingException unusable(String property, Object value, String message, String action,
            Throwable cause) {
        return new SettingException(message, property, value, action, cause);
    }

    /** The setting at fault, e.g. {@code leasehold.cluster.tls.bundle}. */
    public String property() {
        return property;
    }

    /** Its value, as text ({@code "null"} when it was not set). */
    public String value() {
        return value;
    }

    /**
     * What the operator can do, when it is more than correcting {@link #property()} as the
     * message says; otherwise null, and the report says that.
     */
    public String action() {
        return action;
    }
}
