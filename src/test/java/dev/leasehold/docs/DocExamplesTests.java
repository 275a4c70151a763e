package dev.leasehold.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.leasehold.docs.DocExamples.Run;
import dev.leasehold.docs.DocExamples.Skipped;
import dev.leasehold.docs.DocExamples.Step;

/**
 * How {@link DocsIntegrationTests} reads a page and compares: which blocks run, what each is
 * expected to print, and that a drifted doc fails the comparison (the docs test can fail).
 */
class DocExamplesTests {

    private static final String PAGE = """
            # Title

            ```sh
            ./mvnw run   # not in the section
            ```

            ## Quick start

            <!-- docs-test: skip the build already ran -->
            ```sh
            ./mvnw -B package -DskipTests
            ```

            ```sh
            bin/leasehold run --key demo -- sh -c 'echo "A has the lock, token $LEASEHOLD_TOKEN"' &
            bin/leasehold run --key demo -- sh -c 'echo "B # not a comment, token $LEASEHOLD_TOKEN"'
            wait
            ```

            ```
            A has the lock, token 1
            B # not a comment, token 2
            ```

            ```sh
            # a comment line, not a command
            bin/leasehold ping                                   # pong from 127.0.0.1:7420 in 0.361 ms
            bin/leasehold acquire --key orders/42 --wait 0; echo $?   # leasehold: timed out: ... / 65
            bin/leasehold release \\
                --key orders/42 --token 3
            ```

            Prose between: the next block is not the output of the one above.

            ```
            a synopsis, not an output
            ```

            ### A subsection

            ```sh
            curl -s localhost:7421/actuator/health
            ```
            ```
            {"status":"UP",...}
            ```

            ## Next section

            ```sh
            echo not in the section
            ```
            """;

    @Test
    void readsTheSectionsShellBlocksWithWhatEachShows() {
        List<Step> steps = DocExamples.parse("README.md", PAGE, "Quick start");

        assertThat(steps).hasSize(6);
        assertThat(steps.get(0)).isEqualTo(new Skipped("README.md", 11, "./mvnw -B package -DskipTests",
                "the build already ran"));
        Run turns = (Run) steps.get(1);
        assertThat(turns.line()).isEqualTo(15);
        assertThat(turns.script()).startsWith("bin/leasehold run --key demo").endsWith("wait\n");
        assertThat(turns.expected()).containsExactly("A has the lock, token 1", "B # not a comment, token 2");
        assertThat(turns.expectedLine()).isEqualTo(21);
        assertThat(steps.get(2)).isEqualTo(new Run("README.md", 27, "bin/leasehold ping",
                List.of("pong from 127.0.0.1:7420 in 0.361 ms"), 27));
        assertThat(steps.get(3)).isEqualTo(new Run("README.md", 28, "bin/leasehold acquire --key orders/42 --wait 0; echo $?",
                List.of("leasehold: timed out: ...", "65"), 28));
        assertThat(steps.get(4)).isEqualTo(new Run("README.md", 29, "bin/leasehold release --key orders/42 --token 3",
                null, 30));
        assertThat(((Run) steps.get(5)).expected()).containsExactly("{\"status\":\"UP\",...}");
    }

    @Test
    void aShellCommentStartsAWordOutsideQuotes() {
        assertThat(DocExamples.commentStart("echo a # b")).isEqualTo(7);
        assertThat(DocExamples.commentStart("echo 'a # b' \"# c\" $# a#b")).isEqualTo(-1);
        assertThat(DocExamples.commentStart("echo \\# x")).isEqualTo(-1);
    }

    @Test
    void aBlockThatNeverClosesOrAMissingSectionIsAnError() {
        assertThatThrownBy(() -> DocExamples.parse("x.md", "```sh\necho\n", null)).hasMessageContaining("x.md:1");
        assertThatThrownBy(() -> DocExamples.parse("x.md", "# x\n", "Quick start")).hasMessageContaining("Quick start");
    }

    @Test
    void tokensTimesAndPortsAreNormalizedEverythingElseIsCompared() {
        assertThat(DocOutput.normalize("acquired \"orders/42\" token 17, valid until 2026-11-30T11:40:12.345Z (in 29.9s)"))
                .isEqualTo("acquired \"orders/42\" token <token>, valid until <instant> (in <duration>)");
        assertThat(DocOutput.normalize("{\"outcome\":\"pong\",\"server\":\"127.0.0.1:7420\",\"rtt_ms\":0.361}"))
                .isEqualTo("{\"outcome\":\"pong\",\"server\":\"127.0.0.1:<port>\",\"rtt_ms\":<ms>}");
        assertThat(DocOutput.normalize("{\"token\":18,\"valid_until_ms\":1796038812345,\"lease_s\":30}"))
                .isEqualTo("{\"token\":<token>,\"valid_until_ms\":<ms>,\"lease_s\":30}");
        assertThat(DocOutput.normalize("pong from localhost:41234 in 12 ms; n1 (pid 4242) stopped"))
                .isEqualTo("pong from localhost:<port> in <duration>; n1 (pid <pid>) stopped");

        assertThat(DocOutput.compare(List.of("pong from 127.0.0.1:7420 in 0.361 ms"),
                List.of("pong from 127.0.0.1:40123 in 2.5 ms"))).isNull();
        assertThat(DocOutput.compare(List.of("leasehold: timed out: ...", "65"),
                List.of("leasehold: timed out: \"orders/42\" is held (waited 0 s)", "65"))).isNull();
        assertThat(DocOutput.compare(List.of("{\"status\":\"UP\",...}"),
                List.of("{\"status\":\"UP\",\"components\":{\"leasehold\":{\"status\":\"UP\"}}}", ""))).isNull();
    }

    @Test
    void aDriftedDocFailsTheComparisonSayingWhere() {
        // The CLI prints "released"; a doc that still said "freed" must fail, as must a wrong exit code.
        assertThat(DocOutput.compare(List.of("freed \"orders/42\" token 3"), List.of("released \"orders/42\" token 3")))
                .isEqualTo("line 1 differs (normalized): the doc shows \"freed \"orders/42\" token <token>\","
                        + " the run printed \"released \"orders/42\" token <token>\"");
        assertThat(DocOutput.compare(List.of("leasehold: timed out: ...", "65"), List.of("leasehold: timed out: x", "67")))
                .startsWith("line 2 differs");
        assertThat(DocOutput.compare(List.of("pong from 127.0.0.1:7420 in 0.361 ms"),
                List.of("pong from 127.0.0.1:40123 in 2.5 ms", "WARNING: a new line")))
                .isEqualTo("line 2 is more than the doc shows: \"WARNING: a new line\"");
        assertThat(DocOutput.compare(List.of("A done", "B done"), List.of("A done")))
                .isEqualTo("line 2 is missing: the doc shows \"B done\"");
        assertThat(DocOutput.compare(List.of("acquired ... token 3, valid until ..."),
                List.of("acquired \"orders/42\" token 3"))).startsWith("line 1 differs");
    }

    @Test
    void theTokensMustStandInTheOrderTheDocShows() {
        List<String> doc = List.of("A has the lock, token 1", "A done", "B has the lock, token 2", "B done");
        assertThat(DocOutput.compare(doc, List.of("A has the lock, token 7", "A done", "B has the lock, token 9", "B done")))
                .isNull();
        assertThat(DocOutput.compare(doc, List.of("A has the lock, token 9", "A done", "B has the lock, token 7", "B done")))
                .contains("not in the same order");
        assertThat(DocOutput.tokenOrder(List.of(3L, 3L), List.of(3L, 4L))).contains("not in the same order");
        assertThat(DocOutput.tokenOrder(List.of(3L, 3L), List.of(5L, 5L))).isNull();
    }
}
