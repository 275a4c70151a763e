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
 * {@link InvalidLeaseholdPropertyException}s thrown when the beans are made; it runs before
 * Boot's own analyzers, which would name {@code leasehold.client.poolSize}.
 */
public class LeaseholdPropertiesFailureAnalyzer implements FailureAnalyzer, Ordered {

    private final FailureAnalyzer binding = new Binding();
    private final FailureAnalyzer beans = new Beans();

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        FailureAnalysis analysis = binding.analyze(failure);
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
                    description.append(property).append(" = \"").append(f.getRejectedValue()).append('"');
                    Origin origin = origin(f, property, errors.getBoundProperties());
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
     * Where the value was set. Boot finds it only for a direct field; for a list entry
     * ({@code servers[1]}, set as {@code servers=a,b} or {@code servers[1]=b}) and a nested one
     * ({@code tls.trust-store}) it is looked up here.
     */
    private static Origin origin(FieldError error, String property, Set<ConfigurationProperty> bound) {
        Origin origin = Origin.from(error);
        if (origin != null) {
            return origin;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        ConfigurationPropertyName list = ConfigurationPropertyName.of(property.replaceFirst("\\[\\d+]$", ""));
        for (ConfigurationProperty p : bound) {
            if (p.getName().equals(name)) {
                return p.getOrigin();
            }
        }
        for (ConfigurationProperty p : bound) {
            if (p.getName().equals(list)) {
                return p.getOrigin();
            }
        }
        return null;
    }

    /** A setting found unusable when its bean was made. */
    private static final class Beans extends AbstractFailureAnalyzer<InvalidLeaseholdPropertyException> {

        @Override
        protected FailureAnalysis analyze(Throwable rootFailure, InvalidLeaseholdPropertyException cause) {
            return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
        }
    }
}
