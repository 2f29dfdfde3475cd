package io.payonce;

import io.payonce.support.DocumentationPages;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The documentation as a reader follows it: every relative link in README, UPGRADING and the pages
 * under docs/ names a file that exists and, where it names an anchor, a heading of that file, with
 * the anchors GitHub gives headings. And README's reading table leads to every page.
 */
class DocsLinksTest {

    private static final Path ROOT = Path.of("");
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");

    private final Map<Path, Set<String>> anchors = new HashMap<>();

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        List<String> broken = new ArrayList<>();
        for (Path page : DocumentationPages.all()) {
            for (String target : links(page)) {
                String problem = problemWith(page, target);
                if (problem != null) {
                    broken.add(page + ": " + target + " (" + problem + ")");
                }
            }
        }
        assertEquals(List.of(), broken, "links that lead nowhere");
    }

    @Test
    void readmeLeadsToEveryPage() {
        Set<Path> linked = new HashSet<>();
        for (String target : links(ROOT.resolve("README.md"))) {
            if (!isExternal(target)) {
                linked.add(ROOT.resolve(target.split("#", 2)[0]).normalize());
            }
        }
        List<Path> unlinked = DocumentationPages.all().stream().filter(page -> !page.equals(Path.of("README.md")) && !linked.contains(page.normalize())).toList();
        assertEquals(List.of(), unlinked, "pages README does not lead to");
    }

    @Test
    void theCheckSeesBrokenAnchorsAndMissingFiles() {
        Path readme = ROOT.resolve("README.md");
        assertTrue(problemWith(readme, "#no-such-heading-anywhere") != null, "an anchor README lacks");
        assertTrue(problemWith(readme, "docs/no-such-page.md") != null, "a page that does not exist");
    }

    /** The link targets of {@code page}, outside fenced code blocks and code spans. */
    private static List<String> links(Path page) {
        List<String> targets = new ArrayList<>();
        boolean fenced = false;
        for (String line : read(page)) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (!fenced) {
                Matcher link = LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
                while (link.find()) {
                    targets.add(link.group(1));
                }
            }
        }
        return targets;
    }

    /** Why {@code target}, linked from {@code page}, leads nowhere; null when it resolves or leaves the repository. */
    private String problemWith(Path page, String target) {
        if (isExternal(target)) {
            return null;
        }
        String[] parts = target.split("#", 2);
        Path file = parts[0].isEmpty() ? page : page.toAbsolutePath().getParent().resolve(parts[0]).normalize();
        if (!Files.exists(file)) {
            return "no such file";
        }
        if (parts.length < 2) {
            return null;
        }
        if (!file.toString().endsWith(".md")) {
            return "an anchor into a file that is not a page";
        }
        return anchorsOf(file).contains(parts[1]) ? null : "no such heading";
    }

    private static boolean isExternal(String target) {
        return target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*");
    }

    /** The anchors GitHub gives a page: each heading's slug, numbered from -1 when it repeats, and explicit HTML anchors. */
    private Set<String> anchorsOf(Path file) {
        return anchors.computeIfAbsent(file.toAbsolutePath().normalize(), path -> {
            Set<String> found = new HashSet<>();
            Map<String, Integer> seen = new HashMap<>();
            boolean fenced = false;
            for (String line : read(path)) {
                if (line.strip().startsWith("```")) {
                    fenced = !fenced;
                    continue;
                }
                Matcher html = HTML_ANCHOR.matcher(line);
                while (html.find()) {
                    found.add(html.group(1));
                }
                Matcher heading = HEADING.matcher(line);
                if (!fenced && heading.matches()) {
                    String slug = slug(heading.group(1));
                    int times = seen.merge(slug, 1, Integer::sum);
                    found.add(times == 1 ? slug : slug + "-" + (times - 1));
                }
            }
            return found;
        });
    }

    /** GitHub's heading slug: the text as shown, lower case, without punctuation but - and _, spaces as -. */
    static String slug(String heading) {
        String shown = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "");
        return shown.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "").replace(' ', '-');
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
