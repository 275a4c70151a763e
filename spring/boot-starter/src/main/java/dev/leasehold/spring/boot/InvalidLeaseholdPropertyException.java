package dev.leasehold.spring.boot;

import java.util.function.Supplier;

/**
 * A {@code leasehold.*} setting of the starter that cannot be used, found when its bean is made
 * (for what binding cannot check, such as an SSL bundle name). Start-up ends with Spring Boot's
 * "APPLICATION FAILED TO START" report from {@link LeaseholdPropertiesFailureAnalyzer}: the
 * property, its value, what is wrong and what to do.
 */
public class InvalidLeaseholdPropertyException extends IllegalArgumentException {

    private final String property;
    private final Object value;
    private final String action;

    /**
     * @param property the full property name, e.g. {@code leasehold.client.tls.bundle}
     * @param value the value as set
     * @param problem what is wrong with it
     * @param action what to do about it
     */
    public InvalidLeaseholdPropertyException(String property, Object value, String problem, String action,
            Throwable cause) {
        super("Invalid " + property + " = " + value + ": " + problem, cause);
        this.property = property;
        this.value = value;
        this.action = action;
    }

    /** Runs {@code setter}, turning the IllegalArgumentException it throws for a bad value into this exception. */
    static void apply(String property, Object value, Runnable setter) {
        make(property, value, () -> {
            setter.run();
            return null;
        });
    }

    /** Makes something from {@code value}, turning the IllegalArgumentException it throws into this exception. */
    static <T> T make(String property, Object value, Supplier<T> maker) {
        try {
            return maker.get();
        } catch (IllegalArgumentException e) {
            throw new InvalidLeaseholdPropertyException(property, value, e.getMessage(),
                    "Correct " + property + " in the application's configuration.", e);
        }
    }

    /** The full property name. */
    public String property() {
        return property;
    }

    /** The value as set. */
    public Object value() {
        return value;
    }

    /** What to do about it. */
    public String action() {
        return action;
    }
}
