package dev.leasehold.spring.boot;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.leasehold.internal.NearestSetting;

/**
 * A {@code leasehold.client.*} setting that does not exist: {@link LeaseholdClientProperties} binds
 * with {@code ignoreUnknownFields = false}, and this names each unknown key, where it was set and the
 * nearest real setting ("did you mean leasehold.client.pool-size?"). The server has the same report
 * for {@code leasehold.*} (its {@code UnknownSettingFailureAnalyzer}); the two share the suggestion
 * ({@link NearestSetting}, in the client jar, the one module both depend on) but no Spring code.
 */
final class UnknownClientSetting extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        BindException bind = findCause(rootFailure, BindException.class);
        if (bind == null || !bind.getName().toString().equals(LeaseholdClientProperties.PREFIX)) {
            return null;
        }
        List<String> valid = new ArrayList<>();
        names(LeaseholdClientProperties.PREFIX, LeaseholdClientProperties.class, valid);
        StringBuilder description = new StringBuilder();
        for (ConfigurationProperty unknown : cause.getUnboundProperties()) {
            String name = unknown.getName().toString();
            description.append(description.isEmpty() ? "" : "\n").append("Unknown setting ").append(name)
                    .append(" = \"").append(unknown.getValue()).append('"');
            if (unknown.getOrigin() != null) {
                description.append(" (").append(unknown.getOrigin()).append(')');
            }
            description.append(": there is no such setting under leasehold.client.*");
            String nearest = NearestSetting.nearest(LeaseholdClientProperties.PREFIX, name, valid);
            if (nearest != null) {
                description.append("; did you mean ").append(nearest).append('?');
            }
        }
        return new FailureAnalysis(description.toString(), "Correct or remove the setting"
                + (cause.getUnboundProperties().size() > 1 ? "s" : "")
                + " above; docs/spring.md lists every leasehold.client.* setting.", cause);
    }

    /** The bean's settings: its fields in kebab case, nested settings classes followed. */
    static void names(String prefix, Class<?> type, List<String> into) {
        for (Field f : type.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            String name = prefix + "." + DataObjectPropertyName.toDashedForm(f.getName());
            if (f.getType().getEnclosingClass() == LeaseholdClientProperties.class) {
                names(name, f.getType(), into);
            } else {
                into.add(name);
            }
        }
    }
}
