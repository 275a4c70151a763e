package dev.leasehold.config;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

import dev.leasehold.internal.NearestSetting;

/**
 * A setting under {@code leasehold.*} that Leasehold does not have ends start-up with Spring Boot's
 * short report naming it, where it was set and the nearest setting that exists ("did you mean
 * leasehold.max-waiters-per-key?"). {@link LeaseholdProperties} is bound with
 * {@code ignoreUnknownFields = false}, so Boot collects every such name; this analyzer only words
 * the report (Boot's own one says "left unbound" and suggests nothing). It runs before Boot's.
 *
 * <p>The valid names come from the bound type itself (record components, or a JavaBean's fields,
 * in kebab case), so a new setting needs nothing here.
 */
public class UnknownSettingFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
        implements Ordered {

    private final String prefix;

    /** The analyzer for the server's {@code leasehold.*}. */
    public UnknownSettingFailureAnalyzer() {
        this("leasehold");
    }

    UnknownSettingFailureAnalyzer(String prefix) {
        this.prefix = prefix;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
        BindException bind = findCause(rootFailure, BindException.class);
        if (bind == null || !bind.getName().toString().equals(prefix)) {
            return null;
        }
        Class<?> target = bind.getTarget().getType().resolve();
        List<String> valid = new ArrayList<>();
        if (target != null) {
            names(prefix, target, valid, 0);
        }
        StringBuilder description = new StringBuilder();
        for (ConfigurationProperty unknown : cause.getUnboundProperties()) {
            String name = unknown.getName().toString();
            description.append(description.isEmpty() ? "" : "\n")
                    .append("Unknown setting ").append(name).append(" = \"").append(unknown.getValue()).append('"');
            if (unknown.getOrigin() != null) {
                description.append(" (").append(unknown.getOrigin()).append(')');
            }
            description.append(": there is no such setting under ").append(prefix).append(".*");
            String nearest = nearest(prefix, name, valid);
            if (nearest != null) {
                description.append("; did you mean ").append(nearest).append('?');
            }
        }
        return new FailureAnalysis(description.toString(), "Correct or remove the setting"
                + (cause.getUnboundProperties().size() > 1 ? "s" : "") + " above; " + docs() + " lists every "
                + prefix + ".* setting.", cause);
    }

    private String docs() {
        return prefix.equals("leasehold") ? "docs/configuration.md" : "the documentation";
    }

    /**
     * The valid setting names under {@code name}: a record's components or a bean's fields, nested
     * types of our own followed, maps and lists named once ({@code leasehold.acl}).
     */
    static void names(String name, Class<?> type, List<String> into, int depth) {
        if (depth > 4) {
            return;
        }
        if (type.isRecord()) {
            for (RecordComponent c : type.getRecordComponents()) {
                child(name, c.getName(), c.getType(), c.getGenericType(), into, depth);
            }
        } else {
            for (Field f : type.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers())) {
                    child(name, f.getName(), f.getType(), f.getGenericType(), into, depth);
                }
            }
        }
    }

    private static void child(String parent, String javaName, Class<?> type, Type generic, List<String> into,
            int depth) {
        String name = parent + "." + DataObjectPropertyName.toDashedForm(javaName);
        if (ours(type)) {
            names(name, type, into, depth + 1);
        } else if (Map.class.isAssignableFrom(type) && generic instanceof ParameterizedType p
                && p.getActualTypeArguments()[1] instanceof Class<?> value && ours(value)) {
            into.add(name);
            names(name + ".<id>", value, into, depth + 1);
        } else {
            into.add(name);
        }
    }

    /** A nested settings type of this project (not a JDK or Spring value type, not an enum). */
    private static boolean ours(Class<?> type) {
        return type.getName().startsWith("dev.leasehold.") && !type.isEnum() && !type.isInterface()
                && (type.isRecord() || type.getEnclosingClass() != null);
    }

    /**
     * The valid name nearest to {@code unknown} ({@link NearestSetting}), a per-peer name
     * ({@code <id>}) taken with the id the unknown name used; null when nothing is near.
     */
    static String nearest(String prefix, String unknown, List<String> valid) {
        return NearestSetting.nearest(prefix, unknown,
                valid.stream().map(c -> c.contains("<id>") ? withIdOf(unknown, c) : c).toList());
    }

    /** {@code leasehold.cluster.peers.<id>.raft-address} with the id the unknown name used. */
    private static String withIdOf(String unknown, String candidate) {
        String head = candidate.substring(0, candidate.indexOf(".<id>"));
        if (!unknown.startsWith(head + ".")) {
            return candidate;
        }
        String rest = unknown.substring(head.length() + 1);
        int dot = rest.indexOf('.');
        return dot < 0 ? candidate : candidate.replace("<id>", rest.substring(0, dot));
    }
}
