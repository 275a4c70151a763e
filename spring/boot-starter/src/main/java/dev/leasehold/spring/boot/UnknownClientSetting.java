package dev.leasehold.spring.boot;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * A {@code leasehold.client.*} setting that does not exist: {@link LeaseholdClientProperties} binds
 * with {@code ignoreUnknownFields = false}, and this names each unknown key, where it was set and the
 * nearest real setting ("did you mean leasehold.client.pool-size?"). The server has the same report
 * for {@code leasehold.*} (its {@code UnknownSettingFailureAnalyzer}; the two modules share no Spring code).
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
            String nearest = nearest(name, valid);
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

    /** The nearest valid name by edit distance (dashes, dots and case ignored), or null if none is near. */
    static String nearest(String unknown, List<String> valid) {
        String u = squash(unknown);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : valid) {
            int d = distance(u, squash(candidate));
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, squash(best).length() / 3) ? best : null;
    }

    private static String squash(String name) {
        return name.substring(LeaseholdClientProperties.PREFIX.length()).toLowerCase(Locale.ROOT)
                .replaceAll("[-._\\[\\]0-9]", "");
    }

    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                current[j] = Math.min(previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1),
                        Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
