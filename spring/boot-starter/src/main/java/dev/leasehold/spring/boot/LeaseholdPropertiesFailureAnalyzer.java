package dev.leasehold.spring.boot;

import java.util.Set;

import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.bind.validation.ValidationErrors;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

/**
 * Turns a bad {@code leasehold.client.*} setting into Spring Boot's short "APPLICATION FAILED TO
 * START" report: each property by its configuration name ({@code leasehold.client.pool-size}, not
 * the Java field), its value, where it was set, the rule it breaks and what to do. It handles the
 * errors {@link LeaseholdClientProperties} reports when it binds and the
 * {@link InvalidLeaseholdPropertyException}s thrown when the beans are made, and names a setting
 * that does not exist with the nearest one that does ({@link UnknownClientSetting}); it runs before
 * Boot's own analyzers, which would name {@code leasehold.client.poolSize}.
 */
public class LeaseholdPropertiesFailureAnalyzer implements FailureAnalyzer, Ordered {

    private final FailureAnalyzer binding = new Binding();
    private final FailureAnalyzer beans = new Beans();
    private final FailureAnalyzer unknown = new UnknownClientSetting();

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        FailureAnalysis analysis = binding.analyze(failure);
        if (analysis == null) {
            analysis = unknown.analyze(failure);
        }
        return analysis != null ? analysis : beans.analyze(failure);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    /** Errors found while {@code leasehold.client.*} was bound. */
    private static final class Binding extends AbstractFailureAnalyzer<BindValidationException> {

        @Override
        protected FailureAnalysis analyze(Throwable rootFailure, BindValidationException cause) {
            ValidationErrors errors = cause.getValidationErrors();
            String prefix = errors.getName().toString();
            if (!prefix.equals(LeaseholdClientProperties.PREFIX)) {
                return null;
            }
            StringBuilder description = new StringBuilder("Invalid Leasehold client settings:\n");
            for (ObjectError error : errors.getAllErrors()) {
                description.append("\n    ");
                if (error instanceof FieldError f) {
                    String property = prefix + "." + DataObjectPropertyName.toDashedForm(f.getField());
                    ConfigurationProperty set = find(property, errors.getBoundProperties());
                    // The value as written ("0s", not the bound "PT0S"), unless it was a whole list.
                    Object value = set != null ? set.getValue() : f.getRejectedValue();
                    description.append(property).append(" = \"").append(value).append('"');
                    Origin origin = Origin.from(f);
                    if (origin == null) {
                        origin = Origin.from(set != null ? set : find(listOf(property), errors.getBoundProperties()));
                    }
                    if (origin != null) {
                        description.append(" (").append(origin).append(')');
                    }
                    description.append("\n        ");
                }
                description.append(error.getDefaultMessage());
            }
            return new FailureAnalysis(description.toString(), "Correct the leasehold.client settings above in "
                    + "the application's configuration (docs/spring.md lists each one with its range).", cause);
        }
    }

    /**
     * The bound property of that name, or null. Boot ties an error to where its value was set only
     * for a direct field; a list entry ({@code servers[1]}, set as {@code servers=a,b} or
     * {@code servers[1]=b}) and a nested one ({@code tls.trust-store}) are looked up here.
     */
    private static ConfigurationProperty find(String property, Set<ConfigurationProperty> bound) {
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        for (ConfigurationProperty p : bound) {
            if (p.getName().equals(name)) {
                return p;
            }
        }
        return null;
    }

    /** {@code servers[1]} → {@code servers}: the property a comma-separated list was set as. */
    private static String listOf(String property) {
        return property.replaceFirst("\\[\\d+]$", "");
    }

    /** A setting found unusable when its bean was made. */
    private static final class Beans extends AbstractFailureAnalyzer<InvalidLeaseholdPropertyException> {

        @Override
        protected FailureAnalysis analyze(Throwable rootFailure, InvalidLeaseholdPropertyException cause) {
            return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
        }
    }
}
