package dev.leasehold.docs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shell examples of a Markdown page, read as {@link DocsIntegrationTests} runs them
 * (docs/testing.md, "The docs are tested"). Every ```` ```sh ```` block is an example, run by
 * default:
 *
 * <ul>
 * <li>followed by an output block (a fence with no language, only blank lines between), the
 * whole block is one script and the output block is everything it prints (stdout and stderr);
 * <li>otherwise each command line is run alone, and a trailing {@code # comment} is what it
 * prints, lines separated by {@code " / "} ({@code bin/leasehold ping   # pong from ...}); a
 * command without a comment must only exit 0;
 * <li>preceded by {@code <!-- docs-test: skip REASON -->} (the line before the fence), it is not
 * run, and the reason says why (a build, a placeholder): a new block runs unless someone says why not.
 * </ul>
 *
 * Every example must exit 0: to show a failure's exit code, the doc writes {@code ; echo $?}.
 * Plain Markdown, no test framework: the unit test feeds it drifted copies.
 */
final class DocExamples {

    private static final Pattern FENCE = Pattern.compile("^```\\s*([A-Za-z0-9_-]*)\\s*$");
    private static final Pattern SKIP = Pattern.compile("^<!--\\s*docs-test:\\s*skip\\s+(.+?)\\s*-->\\s*$");

    private DocExamples() {
    }

    /** One thing the test does with an example: run it, or say why it does not. */
    sealed interface Step permits Run, Skipped {
        /** The page, for messages. */
        String file();

        /** The 1-based line of the page where the command (or its block) starts. */
        int line();
    }

    /**
     * A script to run with {@code sh -c}, and what the doc says it prints.
     *
     * @param expected the lines the doc shows, or null when it shows none (only exit 0 is checked)
     * @param expectedLine the page's line of the first expected line (the output block's, or the comment's)
     */
    record Run(String file, int line, String script, List<String> expected, int expectedLine) implements Step {
    }

    /** A block the doc marks as not run, with the marker's reason. */
    record Skipped(String file, int line, String script, String reason) implements Step {
    }

    /**
     * The examples of {@code markdown}, in order; with {@code section} non-null only those under
     * the level-2 heading {@code "## " + section} (its subsections included) up to the next one.
     */
    static List<Step> parse(String file, String markdown, String section) {
        List<String> lines = Arrays.asList(markdown.split("\n", -1));
        int from = 0;
        int to = lines.size();
        if (section != null) {
            from = lines.indexOf("## " + section);
            if (from < 0) {
                throw new IllegalArgumentException(file + " has no section '## " + section + "'");
            }
            to = from + 1;
            while (to < lines.size() && !lines.get(to).startsWith("## ")) {
                to++;
            }
        }
        List<Step> steps = new ArrayList<>();
        int i = from;
        while (i < to) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                i++;
                continue;
            }
            int close = closingFence(file, lines, i);
            String language = open.group(1);
            if (!language.equals("sh")) {
                i = close + 1;
                continue;
            }
            int firstLine = i + 2; // 1-based line of the block's first command
            List<String> body = lines.subList(i + 1, close);
            String reason = skipReason(lines, i);
            int next = close + 1;
            while (next < to && lines.get(next).isBlank()) {
                next++;
            }
            boolean hasOutput = next < to && lines.get(next).matches("^```\\s*$");
            if (reason != null) {
                steps.add(new Skipped(file, firstLine, String.join("\n", body), reason));
            } else if (hasOutput) {
                int outputClose = closingFence(file, lines, next);
                steps.add(new Run(file, firstLine, String.join("\n", body) + "\n",
                        List.copyOf(lines.subList(next + 1, outputClose)), next + 2));
                close = outputClose;
            } else {
                steps.addAll(commands(file, body, firstLine));
            }
            i = close + 1;
        }
        return steps;
    }

    private static int closingFence(String file, List<String> lines, int open) {
        for (int j = open + 1; j < lines.size(); j++) {
            if (lines.get(j).matches("^```\\s*$")) {
                return j;
            }
        }
        throw new IllegalArgumentException(file + ":" + (open + 1) + ": code block never closed");
    }

    /** The reason of a skip marker on the line before the fence at {@code fence}, or null. */
    private static String skipReason(List<String> lines, int fence) {
        if (fence == 0) {
            return null;
        }
        Matcher m = SKIP.matcher(lines.get(fence - 1).trim());
        return m.matches() ? m.group(1) : null;
    }

    /** A block without an output block: one Run per command line (a trailing backslash continues it). */
    private static List<Run> commands(String file, List<String> body, int firstLine) {
        List<Run> runs = new ArrayList<>();
        StringBuilder command = new StringBuilder();
        int start = -1;
        for (int k = 0; k < body.size(); k++) {
            String line = body.get(k);
            if (command.length() == 0 && (line.isBlank() || line.trim().startsWith("#"))) {
                continue;
            }
            if (start < 0) {
                start = firstLine + k;
            }
            int hash = commentStart(line);
            String code = hash < 0 ? line : line.substring(0, hash);
            String trimmed = code.stripTrailing();
            if (hash < 0 && trimmed.endsWith("\\")) {
                command.append(trimmed.substring(0, trimmed.length() - 1).strip()).append(' ');
                continue;
            }
            command.append(code.strip());
            List<String> expected = hash < 0 ? null
                    : List.of(line.substring(hash + 1).strip().split("\\s+/\\s+", -1));
            runs.add(new Run(file, start, command.toString(), expected, firstLine + k));
            command.setLength(0);
            start = -1;
        }
        if (command.length() > 0) {
            throw new IllegalArgumentException(file + ":" + start + ": command continues past the end of its block");
        }
        return runs;
    }

    /**
     * Where a shell comment starts on {@code line}: a {@code #} outside quotes at the start of a
     * word; -1 if none. ({@code $#} and {@code a#b} are not comments, as in {@code sh}.)
     */
    static int commentStart(String line) {
        char quote = 0;
        for (int k = 0; k < line.length(); k++) {
            char c = line.charAt(k);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else if (c == '\\' && quote == '"') {
                    k++;
                }
            } else if (c == '\\') {
                k++;
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == '#' && (k == 0 || Character.isWhitespace(line.charAt(k - 1)))) {
                return k;
            }
        }
        return -1;
    }
}
