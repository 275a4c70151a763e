package dev.leasehold.client.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A parsed command line: {@code leasehold [GLOBAL OPTIONS] COMMAND [OPTIONS] [-- CMD ARGS...]}.
 * Options are {@code --name value} or {@code --name=value}; global options may also follow the
 * command. Anything unknown, repeated or missing is a {@link UsageException} with one line that
 * says what.
 */
final class CommandLine {

    static final List<String> COMMANDS = List.of("run", "elect", "acquire", "release", "extend", "ping", "check",
            "inspect", "top", "observe", "cluster", "admin");
    /** Commands that also take their options as plain arguments, in this order ({@code check KEY TOKEN}). */
    private static final Map<String, List<String>> POSITIONAL = Map.of(
            "check", List.of("--key", "--token"),
            "inspect", List.of("--key"),
            "observe", List.of("--key"),
            "cluster", List.of("--action", "--id", "--new-id"),
            "admin", List.of("--what", "--action", "--file"));

    private static final Set<String> GLOBAL_VALUED = Set.of("--server", "--timeout", "--cacert", "--cert",
            "--cert-key");
    private static final Set<String> GLOBAL_SWITCHES = Set.of("--verbose", "--help", "--tls");
    private static final Map<String, Set<String>> VALUED = Map.ofEntries(
            Map.entry("run", Set.of("--key", "--wait", "--lease", "--kill-grace", "--limit", "--value")),
            Map.entry("elect", Set.of("--key", "--identity", "--wait", "--lease", "--kill-grace")),
            Map.entry("acquire", Set.of("--key", "--wait", "--lease", "--limit", "--value")),
            Map.entry("release", Set.of("--key", "--token")),
            Map.entry("extend", Set.of("--key", "--token", "--lease")),
            Map.entry("ping", Set.of()),
            Map.entry("check", Set.of("--key", "--token")),
            Map.entry("inspect", Set.of("--key", "--http")),
            Map.entry("top", Set.of("--n", "--http")),
            Map.entry("observe", Set.of("--key")),
            Map.entry("cluster", Set.of("--action", "--id", "--new-id", "--raft-address", "--client-address",
                    "--identity", "--http")),
            Map.entry("admin", Set.of("--what", "--action", "--file", "--http")));
    /**
     * {@code --json} is for the commands whose output is a result; {@code run}'s output is its
     * command's ({@code elect}'s too, beside its own lines: elected, resigned).
     */
    private static final Set<String> JSON_COMMANDS = Set.of("elect", "acquire", "release", "extend", "ping", "check",
            "inspect", "top", "observe", "cluster", "admin");

    private final String command;
    private final Map<String, String> values;
    private final Set<String> switches;
    private final List<String> tail;

    private CommandLine(String command, Map<String, String> values, Set<String> switches, List<String> tail) {
        this.command = command;
        this.values = values;
        this.switches = switches;
        this.tail = tail;
    }

    /**
     * Parses {@code argv}. A command line asking for help ({@code -h}, {@code --help} or
     * {@code help} before any {@code --}) parses even with other mistakes, so that help always
     * works.
     */
    static CommandLine parse(String[] argv) throws UsageException {
        try {
            return strict(argv);
        } catch (UsageException e) {
            CommandLine help = helpOnly(argv);
            if (help != null) {
                return help;
            }
            throw e;
        }
    }

    private static CommandLine strict(String[] argv) throws UsageException {
        String command = null;
        Map<String, String> values = new HashMap<>();
        Set<String> switches = new HashSet<>();
        List<String> tail = null;
        for (int i = 0; i < argv.length; i++) {
            String token = argv[i];
            if (token.equals("--")) {
                if (!runsCommand(command)) {
                    throw new UsageException(command == null ? "missing command before '--' (see leasehold --help)"
                            : "'--' is only for run and elect; " + command + " takes no command to run");
                }
                tail = List.copyOf(Arrays.asList(argv).subList(i + 1, argv.length));
                break;
            }
            if (token.startsWith("-") && token.length() > 1) {
                String name = token;
                String inline = null;
                int eq = token.indexOf('=');
                if (token.startsWith("--") && eq > 2) {
                    name = token.substring(0, eq);
                    inline = token.substring(eq + 1);
                }
                name = name.equals("-v") ? "--verbose" : name.equals("-h") ? "--help" : name;
                if (isValued(command, name)) {
                    String value = inline;
                    if (value == null) {
                        if (i + 1 >= argv.length) {
                            throw new UsageException(name + " needs a value" + seeHelp(command));
                        }
                        value = argv[++i];
                    }
                    if (values.put(name, value) != null) {
                        throw new UsageException(name + " is given twice" + seeHelp(command));
                    }
                } else if (isSwitch(command, name)) {
                    if (inline != null) {
                        throw new UsageException(name + " takes no value" + seeHelp(command));
                    }
                    switches.add(name);
                } else {
                    throw new UsageException(unknownOption(command, name));
                }
            } else if (command == null) {
                if (token.equals("help")) {
                    switches.add("--help");
                    continue;
                }
                if (!COMMANDS.contains(token)) {
                    throw new UsageException("unknown command '" + token + "'; commands are "
                            + String.join(", ", COMMANDS) + " (see leasehold --help)");
                }
                command = token;
            } else if (POSITIONAL.containsKey(command)) {
                positional(command, token, values);
            } else if (VALUED.get(command).contains("--key") && !givesKey(argv)) {
                // The usual first guess, "leasehold acquire orders/42": say where a key goes.
                throw new UsageException("unexpected argument '" + token + "': the key goes in --key, as in leasehold "
                        + command + " --key " + token + (runsCommand(command) ? " -- COMMAND" : ""));
            } else if (runsCommand(command)) {
                throw new UsageException("unexpected argument '" + token
                        + "': put the command to run after '--', as in leasehold " + command + " --key K -- " + token);
            } else {
                throw new UsageException("unexpected argument '" + token + "'" + seeHelp(command));
            }
        }
        if ("run".equals(command) && switches.contains("--json")) {
            throw new UsageException(unknownOption(command, "--json"));
        }
        if (command == null && !switches.contains("--help")) {
            throw new UsageException("missing command; commands are " + String.join(", ", COMMANDS)
                    + " (see leasehold --help)");
        }
        return new CommandLine(command, values, switches, tail == null ? List.of() : tail);
    }

    /** {@code run} and {@code elect} take a command to run after {@code --}. */
    private static boolean runsCommand(String command) {
        return "run".equals(command) || "elect".equals(command);
    }

    /** A plain argument of {@code check} or {@code inspect}: the next of its options not given yet. */
    private static void positional(String command, String token, Map<String, String> values) throws UsageException {
        for (String option : POSITIONAL.get(command)) {
            if (!values.containsKey(option)) {
                values.put(option, token);
                return;
            }
        }
        throw new UsageException("unexpected argument '" + token + "'" + seeHelp(command));
    }

    /** Whether {@code --key} is given anywhere before {@code --}. */
    private static boolean givesKey(String[] argv) {
        for (String token : argv) {
            if (token.equals("--")) {
                return false;
            }
            if (token.equals("--key") || token.startsWith("--key=")) {
                return true;
            }
        }
        return false;
    }

    /** The first command name before any {@code --}, or null: to name the command in an error. */
    static String commandOf(String[] argv) {
        for (String token : argv) {
            if (token.equals("--")) {
                break;
            }
            if (COMMANDS.contains(token)) {
                return token;
            }
        }
        return null;
    }

    private static CommandLine helpOnly(String[] argv) {
        String command = null;
        boolean help = false;
        for (String token : argv) {
            if (token.equals("--")) {
                break;
            }
            if (token.equals("-h") || token.equals("--help") || (command == null && token.equals("help"))) {
                help = true;
            } else if (command == null && COMMANDS.contains(token)) {
                command = token;
            }
        }
        return help ? new CommandLine(command, Map.of(), Set.of("--help"), List.of()) : null;
    }

    private static boolean isValued(String command, String name) {
        return GLOBAL_VALUED.contains(name) || (command != null && VALUED.get(command).contains(name));
    }

    private static boolean isSwitch(String command, String name) {
        return GLOBAL_SWITCHES.contains(name) || (name.equals("--json") && (command == null
                || JSON_COMMANDS.contains(command)))
                || (name.equals("--shared") && ("run".equals(command) || "acquire".equals(command)))
                || (name.equals("--once") && "observe".equals(command));
    }

    private static String unknownOption(String command, String name) {
        if (command == null) {
            // name the commands that take it, in the help's order (--http is not run's)
            List<String> takers = COMMANDS.stream().filter(c -> VALUED.getOrDefault(c, Set.of()).contains(name)).toList();
            if (!takers.isEmpty()) {
                return name + " goes after the command, as in leasehold " + takers.get(0) + " " + name + " ..."
                        + (takers.size() > 1 ? " (commands that take it: " + String.join(", ", takers) + ")" : "");
            }
            return "unknown option " + name + " (see leasehold --help)";
        }
        if (name.equals("--json")) {
            return "--json is not an option of run: its output is its command's (see leasehold run --help)";
        }
        return "unknown option " + name + " for " + command + seeHelp(command);
    }

    private static String seeHelp(String command) {
        return " (see leasehold " + (command == null ? "" : command + " ") + "--help)";
    }

    /** The command, or null for {@code leasehold --help}. */
    String command() {
        return command;
    }

    boolean has(String switchName) {
        return switches.contains(switchName);
    }

    /** The option's value, or null. */
    String value(String option) {
        return values.get(option);
    }

    /** The option's value, or a UsageException saying it is required. */
    String required(String option) throws UsageException {
        String v = values.get(option);
        if (v == null) {
            throw new UsageException(command + " needs " + option + seeHelp(command));
        }
        return v;
    }

    /** What follows {@code --} (run's or elect's command and its arguments). */
    List<String> tail() {
        return new ArrayList<>(tail);
    }
}
