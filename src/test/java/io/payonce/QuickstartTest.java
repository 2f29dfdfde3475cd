package io.payonce;

import io.payonce.dev.DevTokenResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The quickstart cannot drift: its commands run as docs/quickstart.md writes them, in bash with
 * curl, against an instance on an empty database with the dev token endpoint, and what they print
 * is what the page says they print. Only what differs from run to run is set aside: times, trace
 * ids, processor keys and the processor's ids. A line of the page written "... a ... b" is a
 * long answer cut short: a and b appear in it, in that order.
 */
@QuarkusTest
@TestProfile(QuickstartTest.EmptyDatabaseWithDevTokens.class)
class QuickstartTest {

    private static final Path PAGE = Path.of("docs/quickstart.md");
    private static final String SECTION = "## Quickstart:";
    private static final Path README = Path.of("README.md");
    private static final String README_TOUR = "A payment, its repeat and a refund";
    private static final String WRITTEN_FOR = "localhost:8080/";

    private static final List<Map.Entry<Pattern, String>> VARYING = List.of(
            Map.entry(Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z"), "<time>"),
            Map.entry(Pattern.compile("\"traceId\":\"[0-9a-f]{32}\""), "\"traceId\":\"<trace>\""),
            Map.entry(Pattern.compile("\\bpo_[A-Za-z0-9_-]{43}\\b"), "<processor key>"),
            Map.entry(Pattern.compile("\\b(ch|re)_[0-9a-z]+_\\d+\\b"), "$1_<id>"));

    /** Its own empty database, so that ids start at 1 as on a newcomer's; the dev token endpoint built in. */
    public static final class EmptyDatabaseWithDevTokens implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "payonce-db.name", System.getenv().getOrDefault("PAYONCE_TEST_DB_NAME", "payonce_test") + "_quickstart",
                    DevTokenResource.ENDPOINT, "enabled",
                    "smallrye.jwt.sign.key.location", "src/test/resources/jwt/privateKey.pem");
        }
    }

    @Test
    void theQuickstartPrintsWhatItsPageSays() throws Exception {
        List<String> block = quickstartBlock();
        String port = ConfigProvider.getConfig().getValue("quarkus.http.test-port", String.class);
        String script = String.join("\n", block).replace(WRITTEN_FOR, "localhost:" + port + "/");

        List<String> printed = masked(run(script));
        List<String> expected = masked(block.stream().filter(QuickstartTest::isAnswer).map(line -> line.substring(2)).toList());

        assertTrue(expected.size() > 20, "the page's answers: " + expected);
        compare(expected, printed);
    }

    /**
     * README's short tour is the page's, cut down: its commands are the page's own, in the page's
     * order, and so are its answers, so that the run above holds for it too.
     */
    @Test
    void theReadmesTourIsThePagesCutDown() throws IOException {
        List<String> tour = block(README, README_TOUR);
        List<String> page = quickstartBlock();

        assertInOrder(commands(tour), commands(page), "README's commands among the page's");
        assertInOrder(answers(tour), answers(page), "README's answers among the page's");
        assertTrue(answers(tour).size() >= 6, "README's answers: " + answers(tour));
    }

    private static List<String> commands(List<String> block) {
        return block.stream().map(String::strip).filter(line -> !line.isEmpty() && !line.startsWith("#")).toList();
    }

    private static List<String> answers(List<String> block) {
        return block.stream().filter(QuickstartTest::isAnswer).toList();
    }

    private static void assertInOrder(List<String> some, List<String> all, String what) {
        int at = 0;
        for (String line : some) {
            int found = all.subList(at, all.size()).indexOf(line);
            assertTrue(found >= 0, what + ": " + line);
            at += found + 1;
        }
    }

    /** The page's quickstart: the first code block of its section. */
    private static List<String> quickstartBlock() throws IOException {
        return block(PAGE, SECTION);
    }

    /** The first code block after the line that starts with {@code heading} in {@code file}. */
    private static List<String> block(Path file, String heading) throws IOException {
        List<String> lines = Files.readAllLines(file);
        int section = lines.indexOf(lines.stream().filter(line -> line.startsWith(heading)).findFirst()
                .orElseThrow(() -> new AssertionError(file + " has no section " + heading)));
        int open = section;
        while (!lines.get(open).equals("```")) {
            open++;
        }
        int close = open + 1;
        while (!lines.get(close).equals("```")) {
            close++;
        }
        return lines.subList(open + 1, close);
    }

    /** A comment of the block that shows what a command printed, not what it is for: a body, a status line, a page cut short. */
    private static boolean isAnswer(String line) {
        return line.startsWith("# {") || line.startsWith("# [") || line.startsWith("# ->") || line.startsWith("# ...")
                || line.startsWith("# <");
    }

    private static List<String> run(String script) throws IOException, InterruptedException {
        Process bash = new ProcessBuilder("bash", "-c", "set -u\n" + script).redirectErrorStream(true).start();
        if (!bash.waitFor(120, TimeUnit.SECONDS)) {
            bash.destroyForcibly();
            fail("the quickstart did not end within 120 s");
        }
        String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, bash.exitValue(), output);
        return output.lines().filter(line -> !line.isBlank()).toList();
    }

    private static List<String> masked(List<String> lines) {
        List<String> masked = new ArrayList<>();
        for (String line : lines) {
            String kept = line.strip();
            for (Map.Entry<Pattern, String> varying : VARYING) {
                kept = varying.getKey().matcher(kept).replaceAll(varying.getValue());
            }
            masked.add(kept);
        }
        return masked;
    }

    /**
     * Each answer of the page, in order: a whole line is the next line printed; a line cut short
     * ("... a ... b") is matched by fragments, in order, in what is printed from there on, and one
     * that ends "..." lets what follows skip to the page's next answer. Nothing else is printed.
     */
    private static void compare(List<String> expected, List<String> printed) {
        String all = String.join("\n", printed) + "\n";
        int at = 0;
        boolean skipping = false;
        for (String answer : expected) {
            if (answer.contains("...")) {
                for (String fragment : answer.split("\\.\\.\\.")) {
                    int found = fragment.isBlank() ? at : all.indexOf(fragment.strip(), at);
                    if (found < 0) {
                        fail("the page shows \"" + fragment.strip() + "\", not printed after:\n" + all.substring(0, at));
                    }
                    at = found + fragment.strip().length();
                }
                skipping = answer.endsWith("...");
                continue;
            }
            int line = skipping ? all.indexOf("\n" + answer + "\n", at - 1) + 1 : at;
            if (line <= 0 && skipping || !all.startsWith(answer + "\n", line)) {
                fail("the page shows\n  " + answer + "\nwhere the quickstart printed\n  "
                        + all.substring(at, Math.max(at, all.indexOf('\n', at))) + "\nafter:\n" + all.substring(0, at));
            }
            at = line + answer.length() + 1;
            skipping = false;
        }
        assertTrue(skipping || at == all.length(), "printed beyond the page's answers:\n" + all.substring(Math.min(at, all.length())));
    }
}
