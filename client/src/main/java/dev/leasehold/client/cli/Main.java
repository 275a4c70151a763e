package dev.leasehold.client.cli;

import java.io.PrintStream;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code leasehold} command line: {@code java -jar leasehold-<version>-client.jar COMMAND ...}
 * or the {@code bin/leasehold} launcher. See {@link Help#MAIN} and docs/cli.md.
 */
public final class Main {

    /** Held so that the level set on it sticks (java.util.logging keeps loggers weakly). */
    private static final Logger CLIENT_LOG = Logger.getLogger("dev.leasehold.client");

    private Main() {
    }

    public static void main(String[] args) {
        int code = run(args, System.out, System.err, System.getenv());
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /** Runs one command line and returns its exit code (see {@link ExitCode}). */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        String command = null;
        try {
            CommandLine line = CommandLine.parse(args);
            command = line.command();
            if (line.has("--help")) {
                out.print(Help.of(command));
                out.flush();
                return ExitCode.OK.code();
            }
            Context ctx = new Context(line, out, err, env);
            // The client's own log lines (e.g. an answer for an unknown token) are for --verbose.
            CLIENT_LOG.setLevel(ctx.verbose() ? Level.INFO : Level.SEVERE);
            switch (command) {
                case "run":
                    return new RunCommand(ctx).execute();
                case "elect":
                    return new ElectCommand(ctx).execute();
                case "acquire":
                    return Commands.acquire(ctx);
                case "release":
                    return Commands.release(ctx);
                case "extend":
                    return Commands.extend(ctx);
                case "check":
                    return Commands.check(ctx);
                case "inspect":
                    return Inspect.key(ctx);
                case "top":
                    return Inspect.top(ctx);
                case "observe":
                    return ObserveCommand.execute(ctx);
                case "cluster":
                    return ClusterCommand.execute(ctx);
                case "admin":
                    return AdminCommand.execute(ctx);
                default:
                    return Commands.ping(ctx);
            }
        } catch (UsageException e) {
            command = command != null ? command : CommandLine.commandOf(args);
            err.println("leasehold" + (command == null ? "" : " " + command) + ": " + e.getMessage());
            err.flush();
            return ExitCode.USAGE.code();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("leasehold: interrupted");
            return ExitCode.INTERNAL.code();
        } catch (RuntimeException e) {
            err.println("leasehold: internal error: " + e);
            err.flush();
            return ExitCode.INTERNAL.code();
        }
    }
}
