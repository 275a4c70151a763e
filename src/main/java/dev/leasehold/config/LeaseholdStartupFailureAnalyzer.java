package dev.leasehold.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;

import dev.leasehold.store.DataDirectoryException;

/**
 * Leasehold's own start-up errors (a busy or foreign protocol address, an SSL bundle that does not
 * exist, an initial token below a node's mark, a peer certificate that names no member...) end
 * with Spring Boot's short report, as a busy HTTP port does: the message in "Description", what to
 * do in "Action", instead of 50-70 lines of bean-creation stack trace with the message in the
 * fifth "Caused by".
 *
 * <p>Such errors are the {@link IllegalStateException}s and {@link IllegalArgumentException}s
 * thrown by Leasehold's own code while the context starts; their messages already name the
 * property and the rule ("Invalid leasehold.cluster.initial-token = 5: ..."), so no throw site
 * needs a new exception type. A property-binding failure is left to Boot's own analyzer (it names
 * where the value was set); a data-directory failure to {@link DataDirectoryFailureAnalyzer}.
 */
public class LeaseholdStartupFailureAnalyzer implements FailureAnalyzer, Ordered {

    private static final Pattern PROPERTY = Pattern.compile("Invalid (leasehold\\.[a-z0-9.\\[\\]-]+)");
    private static final Pattern PORT = Pattern.compile("Cannot bind the protocol port (\\S+):(\\d+)");

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 10; // after the unknown-setting analyzer, before Boot's
    }

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        Throwable ours = null;
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof BindException || t instanceof DataDirectoryException) {
                return null;
            }
            if (ours == null && (t instanceof IllegalStateException || t instanceof IllegalArgumentException)
                    && thrownByLeasehold(t)) {
                ours = t;
            }
        }
        return ours == null ? null : new FailureAnalysis(describe(ours), action(ours.getMessage()), ours);
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

    /** What to do, from what the message names. */
    static String action(String message) {
        Matcher port = PORT.matcher(message);
        if (port.find()) {
            String p = port.group(2);
            return "Stop the process that listens on port " + p + " (ss -ltnp 'sport = :" + p + "' shows it) or set "
                    + "another leasehold.port; leasehold.address must be an address of this host (127.0.0.1, 0.0.0.0 "
                    + "or one of its interfaces' addresses).";
        }
        Matcher property = PROPERTY.matcher(message);
        if (property.find()) {
            String name = property.group(1);
            return "Correct " + name + " as the message says; docs/configuration.md"
                    + (name.contains(".tls.") || name.endsWith(".tls") ? " and docs/security.md describe" : " describes")
                    + " it.";
        }
        return "Correct the setting the message names; docs/configuration.md lists every leasehold.* setting.";
    }
}
