package dev.leasehold.config;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;

import dev.leasehold.settings.SettingException;
import dev.leasehold.store.DataDirectoryException;

/**
 * Leasehold's own start-up errors (a busy or foreign protocol address, an SSL bundle that does not
 * exist, an initial token below a node's mark, a peer certificate that names no member...) end
 * with Spring Boot's short report, as a busy HTTP port does: the message in "Description", what to
 * do in "Action", instead of 50-70 lines of bean-creation stack trace with the message in the
 * fifth "Caused by".
 *
 * <p>A setting that cannot be used is a {@link SettingException}: the action comes from its
 * fields (the property it names, or the action it carries), never from its message text, so a
 * throw site may word the message as it likes. Any other {@link IllegalStateException} or
 * {@link IllegalArgumentException} thrown by Leasehold's own code while the context starts still
 * gets the report, with a general action. A property-binding failure is left to Boot's own
 * analyzer (it names where the value was set); a data-directory failure to
 * {@link DataDirectoryFailureAnalyzer}.
 */
public class LeaseholdStartupFailureAnalyzer implements FailureAnalyzer, Ordered {

    /** For a start-up error that names a setting only in its words. */
    static final String GENERAL_ACTION =
            "Correct the setting the message names; docs/configuration.md lists every leasehold.* setting.";

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 10; // after the unknown-setting analyzer, before Boot's
    }

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        SettingException setting = null;
        Throwable ours = null;
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof BindException || t instanceof DataDirectoryException) {
                return null;
            }
            if (setting == null && t instanceof SettingException s) {
                setting = s;
            } else if (ours == null && (t instanceof IllegalStateException || t instanceof IllegalArgumentException)
                    && thrownByLeasehold(t)) {
                ours = t;
            }
        }
        if (setting != null) {
            return new FailureAnalysis(describe(setting), action(setting), setting);
        }
        return ours == null ? null : new FailureAnalysis(describe(ours), GENERAL_ACTION, ours);
    }

    /** The message, with the root cause's when it adds to it ("Address already in use"). */
    static String describe(Throwable ours) {
        Throwable root = ours;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = ours.getMessage();
        return root == ours || root.getMessage() == null || message.contains(root.getMessage()) ? message
                : message + "\n    caused by: " + root.getMessage();
    }

    private static boolean thrownByLeasehold(Throwable t) {
        StackTraceElement[] trace = t.getStackTrace();
        return trace.length > 0 && trace[0].getClassName().startsWith("dev.leasehold.") && t.getMessage() != null;
    }

    /** What to do: the exception's own action, else correct the property, and where it is described. */
    static String action(SettingException e) {
        if (e.action() != null) {
            return e.action();
        }
        String name = e.property();
        return "Correct " + name + " as the message says; docs/configuration.md"
                + (name.contains(".tls.") || name.endsWith(".tls") ? " and docs/security.md describe" : " describes")
                + " it.";
    }
}
